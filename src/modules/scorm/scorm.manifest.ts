/**
 * `imsmanifest.xml` of a SCORM 1.2 or 2004 (2nd, 3rd, 4th edition) package, parsed with
 * fast-xml-parser and read with its namespaces resolved: elements and attributes are matched by
 * namespace family (IMS CP, ADL CP, IMS SS) and local name, whatever prefixes the manifest uses.
 */
import path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { OrganizationItem, ScormVersion, XmlData } from './scorm.tables.js';
import { refusePackage } from './scorm.zip.js';

const XML_NS = 'http://www.w3.org/XML/1998/namespace';

type Family = 'cp' | 'adlcp' | 'imsss' | 'xml' | 'none';

interface XNode {
  ns: string;
  local: string;
  /** `<namespace>|<local name>` → value; unprefixed attributes have no namespace. */
  attrs: Map<string, string>;
  children: XNode[];
  text: string;
}

export interface ManifestSco {
  identifier: string;
  resourceIdentifier: string;
  title: string;
  launchPath: string;
  launchQuery: string;
  scormType: 'sco' | 'asset';
  isVisible: boolean;
  masteryScore: number | null;
  scaledPassingScore: number | null;
  completionThreshold: number | null;
  launchData: string | null;
  maxTimeAllowed: string | null;
  timeLimitAction: string | null;
  sequencing: XmlData | null;
}

export interface ParsedManifest {
  version: ScormVersion;
  schemaVersion: string;
  identifier: string;
  title: string;
  organizationIdentifier: string | null;
  organization: OrganizationItem[];
  sequencing: XmlData[];
  scos: ManifestSco[];
  /** Every file the manifest's resources list (relative to the package root), for information. */
  resourceFiles: string[];
}

const bad = (message: string) => refusePackage('bad_manifest', `imsmanifest.xml: ${message}`, { entry: 'imsmanifest.xml' });

function familyOf(ns: string): Family {
  if (ns === '') return 'none';
  if (ns === XML_NS) return 'xml';
  if (/imscp/i.test(ns)) return 'cp';
  if (/adlcp/i.test(ns)) return 'adlcp';
  if (/imsss/i.test(ns)) return 'imsss';
  return 'none';
}

// ── XML → namespace-resolved tree ──────────────────────────────────────────────

type RawNode = Record<string, unknown>;

function toTree(raw: RawNode[], scope: Map<string, string>, seenNamespaces: Set<string>): XNode[] {
  const out: XNode[] = [];
  for (const node of raw) {
    const tag = Object.keys(node).find((k) => k !== ':@');
    if (!tag || tag === '#text' || tag.startsWith('?') || tag === '#comment') continue;
    const rawAttrs = (node[':@'] ?? {}) as Record<string, string>;
    const local = new Map(scope);
    for (const [k, v] of Object.entries(rawAttrs)) {
      if (k === 'xmlns') local.set('', v);
      else if (k.startsWith('xmlns:')) local.set(k.slice(6), v);
    }
    for (const v of local.values()) seenNamespaces.add(v);
    const resolve = (qname: string, isAttribute: boolean) => {
      const i = qname.indexOf(':');
      if (i === -1) return { ns: isAttribute ? '' : (local.get('') ?? ''), name: qname };
      const prefix = qname.slice(0, i);
      // An undeclared prefix (sloppy manifests) stands for itself, so `adlcp:` still reads as ADL CP.
      return { ns: local.get(prefix) ?? `urn:undeclared:${prefix}`, name: qname.slice(i + 1) };
    };
    const { ns, name } = resolve(tag, false);
    const attrs = new Map<string, string>();
    for (const [k, v] of Object.entries(rawAttrs)) {
      if (k === 'xmlns' || k.startsWith('xmlns:')) continue;
      const a = resolve(k, true);
      attrs.set(`${a.ns}|${a.name}`, String(v));
    }
    const kids = (node[tag] ?? []) as RawNode[];
    const text = kids
      .filter((k) => '#text' in k)
      .map((k) => String(k['#text']))
      .join('')
      .trim();
    out.push({ ns, local: name, attrs, children: toTree(kids, local, seenNamespaces), text });
  }
  return out;
}

const is = (n: XNode, family: Family, local: string) => (family === 'cp' ? ['cp', 'none'].includes(familyOf(n.ns)) : familyOf(n.ns) === family) && n.local === local;
const kids = (n: XNode | undefined, family: Family, local: string) => (n ? n.children.filter((c) => is(c, family, local)) : []);
const kid = (n: XNode | undefined, family: Family, local: string) => kids(n, family, local)[0];

/** An attribute by family and local name; ADL/IMS SS attribute names compared case-insensitively (scormtype vs scormType). */
function attr(n: XNode | undefined, family: Family, local: string): string | undefined {
  if (!n) return undefined;
  for (const [key, value] of n.attrs) {
    const bar = key.lastIndexOf('|');
    const ns = key.slice(0, bar);
    const name = key.slice(bar + 1);
    const famOk = family === 'none' ? ns === '' : familyOf(ns) === family;
    if (famOk && (family === 'none' ? name === local : name.toLowerCase() === local.toLowerCase())) return value;
  }
  return undefined;
}

/** A JSON copy of an element (sequencing kept as data). */
function toData(n: XNode): XmlData {
  const out: XmlData = { name: n.local };
  if (n.attrs.size > 0) out.attributes = Object.fromEntries([...n.attrs].map(([k, v]) => [k.slice(k.lastIndexOf('|') + 1), v]));
  if (n.text) out.text = n.text;
  if (n.children.length > 0) out.children = n.children.map(toData);
  return out;
}

// ── values ─────────────────────────────────────────────────────────────────────

function decimal(text: string | undefined, what: string, min: number, max: number): number | null {
  if (text === undefined || text.trim() === '') return null;
  const v = Number(text.trim());
  if (!/^[-+]?(\d+\.?\d*|\.\d+)$/.test(text.trim()) || !Number.isFinite(v) || v < min || v > max)
    throw bad(`${what} must be a number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return v;
}

const isTrue = (v: string | undefined) => v !== undefined && /^(true|1)$/i.test(v.trim());

/** `base` values join like URLs: each a directory prefix of what follows. */
function joinBase(...parts: Array<string | undefined>) {
  return parts.filter((p): p is string => !!p && p.trim() !== '').join('');
}

/**
 * The launch file (a path inside the package) and the query/fragment of a resource's href with its
 * xml:base chain and the item's parameters (IMS CP / SCORM CAM rules for `parameters`).
 */
function launchOf(base: string, href: string, parameters: string | undefined): { launchPath: string; launchQuery: string } {
  const full = base + href;
  if (/^[a-z][a-z0-9+.-]*:/i.test(full) || full.startsWith('//')) throw bad(`launch href ${JSON.stringify(full)} is not a file in the package (external content is not supported)`);
  const hashAt = full.indexOf('#');
  const beforeHash = hashAt === -1 ? full : full.slice(0, hashAt);
  let fragment = hashAt === -1 ? '' : full.slice(hashAt);
  const queryAt = beforeHash.indexOf('?');
  const rawPath = queryAt === -1 ? beforeHash : beforeHash.slice(0, queryAt);
  let query = queryAt === -1 ? '' : beforeHash.slice(queryAt);
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    throw bad(`launch href ${JSON.stringify(full)} is not a valid path`);
  }
  const normal = path.posix.normalize(decoded.replace(/^\/+/, ''));
  if (normal.startsWith('../') || normal === '..' || normal === '.' || decoded.startsWith('/')) throw bad(`launch href ${JSON.stringify(full)} points outside the package`);
  const params = parameters?.trim();
  if (params) {
    if (params.startsWith('#')) {
      if (!fragment) fragment = params;
    } else {
      const bare = params.replace(/^[?&]+/, '');
      if (bare) query = query ? `${query}&${bare}` : `?${bare}`;
    }
  }
  return { launchPath: normal, launchQuery: query + fragment };
}

// ── the manifest ───────────────────────────────────────────────────────────────

function detectVersion(root: XNode, namespaces: Set<string>): { version: ScormVersion; schemaVersion: string } {
  const schemaVersion = kid(kid(root, 'cp', 'metadata'), 'cp', 'schemaversion')?.text ?? '';
  if (/^1\.2$/.test(schemaVersion)) return { version: '1.2', schemaVersion };
  if (/2004|CAM\s*1\.3|^1\.3$/i.test(schemaVersion)) return { version: '2004', schemaVersion };
  const all = [...namespaces];
  if (all.some((ns) => /adlcp_v1p3|imsss|adlseq|adlnav|imscp_v1p1$/i.test(ns))) return { version: '2004', schemaVersion: schemaVersion || '2004' };
  if (all.some((ns) => /adlcp_rootv1p2|imscp_rootv1p1p2/i.test(ns))) return { version: '1.2', schemaVersion: schemaVersion || '1.2' };
  throw bad('cannot tell the SCORM version (no schemaversion 1.2 or 2004, no SCORM namespaces)');
}

interface ResourceInfo {
  identifier: string;
  href: string | undefined;
  base: string;
  scormType: 'sco' | 'asset';
}

/** Parses and checks `imsmanifest.xml`; every problem is 400 VALIDATION_ERROR (`problem: bad_manifest`). */
export function parseManifest(xml: string): ParsedManifest {
  if (/<!ENTITY/i.test(xml)) throw bad('entity declarations are not allowed');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw bad(`malformed XML (${valid.err.msg} at line ${valid.err.line})`);
  const parser = new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseAttributeValue: false,
    parseTagValue: false,
    trimValues: true,
  });
  const namespaces = new Set<string>();
  const tree = toTree(parser.parse(xml) as RawNode[], new Map([['xml', XML_NS]]), namespaces);
  const root = tree[0];
  if (!root || !is(root, 'cp', 'manifest')) throw bad('the root element must be <manifest>');
  const identifier = attr(root, 'none', 'identifier');
  if (!identifier) throw bad('<manifest> has no identifier');
  const { version, schemaVersion } = detectVersion(root, namespaces);

  const manifestBase = attr(root, 'xml', 'base');
  const resourcesEl = kid(root, 'cp', 'resources');
  if (!resourcesEl) throw bad('no <resources> element');
  const resourcesBase = attr(resourcesEl, 'xml', 'base');
  const resources = new Map<string, ResourceInfo>();
  const resourceFiles: string[] = [];
  for (const r of kids(resourcesEl, 'cp', 'resource')) {
    const id = attr(r, 'none', 'identifier');
    if (!id) throw bad('a <resource> has no identifier');
    if (resources.has(id)) throw bad(`resource identifier ${JSON.stringify(id)} is used twice`);
    const type = (attr(r, 'adlcp', 'scormType') ?? 'asset').trim().toLowerCase();
    if (type !== 'sco' && type !== 'asset') throw bad(`resource ${id}: scormType must be sco or asset, got ${JSON.stringify(type)}`);
    const base = joinBase(manifestBase, resourcesBase, attr(r, 'xml', 'base'));
    resources.set(id, { identifier: id, href: attr(r, 'none', 'href'), base, scormType: type });
    for (const f of kids(r, 'cp', 'file')) {
      const href = attr(f, 'none', 'href');
      if (href) resourceFiles.push(path.posix.normalize(base + href));
    }
  }

  const organizationsEl = kid(root, 'cp', 'organizations');
  const orgs = kids(organizationsEl, 'cp', 'organization');
  const defaultId = attr(organizationsEl, 'none', 'default');
  let org: XNode | undefined = orgs[0];
  if (defaultId) {
    org = orgs.find((o) => attr(o, 'none', 'identifier') === defaultId);
    if (!org) throw bad(`the default organization ${JSON.stringify(defaultId)} does not exist`);
  }

  const collection = kid(root, 'imsss', 'sequencingCollection');
  const collectionById = new Map(kids(collection, 'imsss', 'sequencing').map((s) => [attr(s, 'none', 'ID') ?? '', s]));

  const scos: ManifestSco[] = [];
  const seen = new Set<string>();
  const walk = (items: XNode[]): OrganizationItem[] =>
    items.map((item) => {
      const itemId = attr(item, 'none', 'identifier');
      if (!itemId) throw bad('an <item> has no identifier');
      if (seen.has(itemId)) throw bad(`item identifier ${JSON.stringify(itemId)} is used twice`);
      seen.add(itemId);
      const title = kid(item, 'cp', 'title')?.text || itemId;
      const isVisible = attr(item, 'none', 'isvisible') === undefined || isTrue(attr(item, 'none', 'isvisible'));
      const ref = attr(item, 'none', 'identifierref');
      let launchable = false;
      if (ref) {
        const resource = resources.get(ref);
        if (!resource) throw bad(`item ${itemId} refers to the unknown resource ${JSON.stringify(ref)}`);
        if (!resource.href) throw bad(`resource ${ref} (of item ${itemId}) has no href to launch`);
        launchable = true;
        scos.push({
          ...itemDetails(item, version, collectionById),
          identifier: itemId,
          resourceIdentifier: ref,
          title,
          isVisible,
          scormType: resource.scormType,
          ...launchOf(resource.base, resource.href, attr(item, 'none', 'parameters')),
        });
      }
      return { identifier: itemId, title, launchable, isVisible, children: walk(kids(item, 'cp', 'item')) };
    });
  const organization = org ? walk(kids(org, 'cp', 'item')) : [];

  // A 1.2 package may have no organization: each SCO resource is then launched on its own.
  if (!org) {
    for (const r of resources.values()) {
      if (r.scormType === 'sco' && r.href) {
        scos.push({
          ...emptyDetails(),
          identifier: r.identifier,
          resourceIdentifier: r.identifier,
          title: r.identifier,
          isVisible: true,
          scormType: 'sco',
          ...launchOf(r.base, r.href, undefined),
        });
      }
    }
  }
  if (scos.length === 0) throw bad('no item launches anything (no organization item refers to a resource with an href)');

  const sequencing: XmlData[] = [];
  const orgSequencing = kid(org, 'imsss', 'sequencing');
  if (orgSequencing) sequencing.push(toData(orgSequencing));
  if (collection) sequencing.push(toData(collection));

  return {
    version,
    schemaVersion,
    identifier,
    title: kid(org, 'cp', 'title')?.text || identifier,
    organizationIdentifier: org ? (attr(org, 'none', 'identifier') ?? null) : null,
    organization,
    sequencing,
    scos,
    resourceFiles,
  };
}

interface ItemDetails {
  masteryScore: number | null;
  scaledPassingScore: number | null;
  completionThreshold: number | null;
  launchData: string | null;
  maxTimeAllowed: string | null;
  timeLimitAction: string | null;
  sequencing: XmlData | null;
}

const emptyDetails = (): ItemDetails => ({
  masteryScore: null,
  scaledPassingScore: null,
  completionThreshold: null,
  launchData: null,
  maxTimeAllowed: null,
  timeLimitAction: null,
  sequencing: null,
});

/** What the LMS gives a SCO at launch, from its item (1.2 adlcp elements; 2004 adlcp and imsss). */
function itemDetails(item: XNode, version: ScormVersion, collection: Map<string, XNode>) {
  const details = emptyDetails();
  const adl = (local: string) => item.children.find((c) => familyOf(c.ns) === 'adlcp' && c.local.toLowerCase() === local.toLowerCase());
  details.launchData = adl('dataFromLMS')?.text || null;
  details.timeLimitAction = adl('timeLimitAction')?.text || null;
  if (version === '1.2') {
    details.masteryScore = decimal(adl('masteryscore')?.text, `item ${attr(item, 'none', 'identifier')}: masteryscore`, 0, 100);
    details.maxTimeAllowed = adl('maxtimeallowed')?.text || null;
    return details;
  }
  const threshold = adl('completionThreshold');
  if (threshold) {
    // 4th edition: attributes (applies only when completedByMeasure); 3rd edition: the value as text.
    if (threshold.attrs.size > 0) {
      if (isTrue(attr(threshold, 'none', 'completedByMeasure')))
        details.completionThreshold = decimal(attr(threshold, 'none', 'minProgressMeasure') ?? '1.0', 'completionThreshold minProgressMeasure', 0, 1);
    } else {
      details.completionThreshold = decimal(threshold.text, 'completionThreshold', 0, 1);
    }
  }
  const own = kid(item, 'imsss', 'sequencing');
  if (own) {
    details.sequencing = toData(own);
    const shared = collection.get(attr(own, 'none', 'IDRef') ?? '');
    const objectives = kid(own, 'imsss', 'objectives') ?? kid(shared, 'imsss', 'objectives');
    const primary = kid(objectives, 'imsss', 'primaryObjective');
    if (primary && isTrue(attr(primary, 'none', 'satisfiedByMeasure'))) {
      // minNormalizedMeasure defaults to 1.0 (IMS SS).
      details.scaledPassingScore = decimal(kid(primary, 'imsss', 'minNormalizedMeasure')?.text ?? '1.0', 'minNormalizedMeasure', -1, 1);
    }
    const limits = kid(own, 'imsss', 'limitConditions') ?? kid(shared, 'imsss', 'limitConditions');
    details.maxTimeAllowed = attr(limits, 'none', 'attemptAbsoluteDurationLimit') ?? null;
  }
  return details;
}
