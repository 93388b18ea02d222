/**
 * SCORM packages built in the tests with yazl: a conformant SCORM 1.2 package and a SCORM 2004
 * 4th edition package (imsmanifest.xml, HTML SCOs that talk to the run-time API, assets), and
 * helpers to build hostile zips.
 */
import yazl from 'yazl';

export interface ZipFileSpec {
  name: string;
  data: string | Buffer;
  /** Deflate (default) or store. */
  compress?: boolean;
  /** Unix mode (e.g. 0o120777 for a symbolic link). */
  mode?: number;
}

export function zipOf(files: ZipFileSpec[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const f of files) {
    if (f.name.endsWith('/')) {
      zip.addEmptyDirectory(f.name);
      continue;
    }
    zip.addBuffer(Buffer.isBuffer(f.data) ? f.data : Buffer.from(f.data), f.name, { compress: f.compress ?? true, ...(f.mode !== undefined ? { mode: f.mode } : {}) });
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

/** Replaces every occurrence of `from` with `to` (same length) in a zip: names yazl itself refuses to write. */
export function patchBytes(zip: Buffer, from: string, to: string): Buffer {
  if (from.length !== to.length) throw new Error('patchBytes: same length only');
  const out = Buffer.from(zip);
  const needle = Buffer.from(from);
  let at = out.indexOf(needle);
  if (at === -1) throw new Error(`patchBytes: ${from} not found`);
  while (at !== -1) {
    Buffer.from(to).copy(out, at);
    at = out.indexOf(needle, at + needle.length);
  }
  return out;
}

/** Rewrites the uncompressed size the central directory declares for `name` (a lying header). */
export function patchDeclaredSize(zip: Buffer, name: string, size: number): Buffer {
  const out = Buffer.from(zip);
  const sig = Buffer.from([0x50, 0x4b, 0x01, 0x02]);
  let at = out.indexOf(sig);
  while (at !== -1) {
    const nameLength = out.readUInt16LE(at + 28);
    if (out.subarray(at + 46, at + 46 + nameLength).toString() === name) {
      out.writeUInt32LE(size, at + 24);
      return out;
    }
    at = out.indexOf(sig, at + 4);
  }
  throw new Error(`patchDeclaredSize: ${name} not in the central directory`);
}

/** A SCO page: finds the API the way real content does and reports through it. */
const scoPage = (title: string, api: 'API' | 'API_1484_11') => `<!doctype html>
<html><head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="../shared/style.css"></head>
<body><h1>${title}</h1><img src="img/cell.svg" alt="A cell">
<script>
function findAPI(w) { for (var i = 0; w && i < 10; i++) { if (w.${api}) return w.${api}; if (w.parent === w) break; w = w.parent; } return null; }
var api = findAPI(window.parent);
</script></body></html>
`;

export const MANIFEST_12 = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="com.example.microscope12" version="1.0"
  xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.imsproject.org/xsd/imscp_rootv1p1p2 imscp_rootv1p1p2.xsd http://www.adlnet.org/xsd/adlcp_rootv1p2 adlcp_rootv1p2.xsd">
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>1.2</schemaversion>
  </metadata>
  <organizations default="org_microscope">
    <organization identifier="org_microscope">
      <title>Virtual microscope lab (SCORM 1.2)</title>
      <item identifier="item_lab" identifierref="res_lab" isvisible="true" parameters="?mode=lab">
        <title>The lab</title>
        <adlcp:masteryscore>80</adlcp:masteryscore>
        <adlcp:datafromlms>slide=3</adlcp:datafromlms>
        <adlcp:maxtimeallowed>00:30:00</adlcp:maxtimeallowed>
        <adlcp:timelimitaction>continue,no message</adlcp:timelimitaction>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="res_lab" type="webcontent" adlcp:scormtype="sco" href="lab/index.html">
      <file href="lab/index.html"/>
      <dependency identifierref="res_shared"/>
    </resource>
    <resource identifier="res_shared" type="webcontent" adlcp:scormtype="asset">
      <file href="shared/style.css"/>
      <file href="lab/img/cell.svg"/>
    </resource>
  </resources>
</manifest>
`;

const CSS = 'body { font-family: sans-serif; }\n';
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><circle cx="5" cy="5" r="4"/></svg>\n';

export function scorm12Package(): Promise<Buffer> {
  return zipOf([
    { name: 'imsmanifest.xml', data: MANIFEST_12 },
    { name: 'lab/', data: '' },
    { name: 'lab/index.html', data: scoPage('The lab', 'API') },
    { name: 'lab/img/cell.svg', data: SVG },
    { name: 'shared/style.css', data: CSS },
  ]);
}

/**
 * SCORM 2004 4th edition, with other prefixes than the usual ones (namespaces are what count), an
 * xml:base chain, two SCOs (the second with a passing score of 0.6 and a completion threshold),
 * item parameters, and sequencing.
 */
export const MANIFEST_2004 = `<?xml version="1.0" encoding="UTF-8"?>
<cp:manifest identifier="com.example.microscope2004" version="1"
  xmlns:cp="http://www.imsglobal.org/xsd/imscp_v1p1"
  xmlns:adl="http://www.adlnet.org/xsd/adlcp_v1p3"
  xmlns:ss="http://www.imsglobal.org/xsd/imsss"
  xmlns:adlseq="http://www.adlnet.org/xsd/adlseq_v1p3"
  xmlns:adlnav="http://www.adlnet.org/xsd/adlnav_v1p3">
  <cp:metadata>
    <cp:schema>ADL SCORM</cp:schema>
    <cp:schemaversion>2004 4th Edition</cp:schemaversion>
  </cp:metadata>
  <cp:organizations default="org_lab">
    <cp:organization identifier="org_lab" adlseq:objectivesGlobalToSystem="false">
      <cp:title>Virtual microscope lab (SCORM 2004)</cp:title>
      <cp:item identifier="item_intro" identifierref="res_intro">
        <cp:title>Introduction</cp:title>
        <adl:dataFromLMS>intro-data</adl:dataFromLMS>
      </cp:item>
      <cp:item identifier="item_check" identifierref="res_check" parameters="#start">
        <cp:title>Check your understanding</cp:title>
        <adl:completionThreshold completedByMeasure="true" minProgressMeasure="0.8"/>
        <ss:sequencing>
          <ss:limitConditions attemptAbsoluteDurationLimit="PT1H"/>
          <ss:objectives>
            <ss:primaryObjective objectiveID="pass_check" satisfiedByMeasure="true">
              <ss:minNormalizedMeasure>0.6</ss:minNormalizedMeasure>
            </ss:primaryObjective>
          </ss:objectives>
          <ss:deliveryControls completionSetByContent="true" objectiveSetByContent="true"/>
        </ss:sequencing>
      </cp:item>
      <ss:sequencing>
        <ss:controlMode choice="true" flow="true"/>
      </ss:sequencing>
    </cp:organization>
  </cp:organizations>
  <cp:resources xml:base="content/">
    <cp:resource identifier="res_intro" type="webcontent" adl:scormType="sco" href="intro/index.html">
      <cp:file href="intro/index.html"/>
      <cp:dependency identifierref="res_shared"/>
    </cp:resource>
    <cp:resource identifier="res_check" type="webcontent" adl:scormType="sco" xml:base="check/" href="index.html?lang=en">
      <cp:file href="index.html"/>
      <cp:dependency identifierref="res_shared"/>
    </cp:resource>
    <cp:resource identifier="res_shared" type="webcontent" adl:scormType="asset">
      <cp:file href="shared/style.css"/>
    </cp:resource>
  </cp:resources>
</cp:manifest>
`;

export function scorm2004Package(): Promise<Buffer> {
  return zipOf([
    { name: 'imsmanifest.xml', data: MANIFEST_2004 },
    { name: 'content/intro/index.html', data: scoPage('Introduction', 'API_1484_11') },
    { name: 'content/intro/img/cell.svg', data: SVG },
    { name: 'content/check/index.html', data: scoPage('Check your understanding', 'API_1484_11') },
    { name: 'content/shared/style.css', data: CSS },
  ]);
}
