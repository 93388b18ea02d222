/**
 * The LMS side of the SCORM run-time API: the launch page (`GET /api/scorm/{id}/player`) frames the
 * SCO and defines `window.API` (SCORM 1.2) or `window.API_1484_11` (SCORM 2004), which the SCO finds
 * by walking up its parent windows. The adapter keeps the launch's CMI values, answers reads from
 * them (with the data model's read/write rules and error codes), queues writes, and sends them to
 * `POST /api/scorm/{id}/track` on Commit and Terminate (synchronous XHR: the API is synchronous, and
 * the server's validation decides what Commit returns). It is plain ES5 in a string so it reaches the
 * browser exactly as written (no bundler or transpiler output).
 */
import { CHILDREN, ERROR_STRINGS, accessTable } from './scorm.datamodel.js';
import type { ScormVersion } from './scorm.tables.js';

export interface RuntimeConfig {
  version: ScormVersion;
  trackUrl: string;
  scoId: string;
  attemptId: string | null;
  cmi: Record<string, string>;
  /** false in browse mode (a manager previewing without an enrollment): Commit and Terminate succeed and send nothing. */
  tracked: boolean;
}

/** The adapter: `(function (window, config) {…})`, called by the launch page with the launch's config. */
export const RUNTIME_JS = String.raw`(function (window, config) {
  'use strict';
  var v12 = config.version === '1.2';
  var ARRAYS = { objectives: 1, interactions: 1, correct_responses: 1, comments_from_learner: 1, comments_from_lms: 1 };
  var E = v12
    ? { general: 101, argument: 201, notInit: 301, afterTerm: 101, already: 101, unknown: 201, noChildren: 202, noCount: 203, keyword: 402, readOnly: 403, writeOnly: 404, commit: 101, notInitGet: 0 }
    : { general: 101, argument: 201, notInit: 0, afterTerm: 0, already: 103, unknown: 401, noChildren: 301, noCount: 301, keyword: 404, readOnly: 404, writeOnly: 405, commit: 391, notInitGet: 403 };
  var state = 'new';
  var values = {};
  var k;
  for (k in config.cmi) if (Object.prototype.hasOwnProperty.call(config.cmi, k)) values[k] = config.cmi[k];
  var pending = {};
  var order = [];
  var attemptId = config.attemptId;
  var lastError = 0;
  var diagnostic = '';

  function fail(code, why) { lastError = code; diagnostic = why || ''; return 'false'; }
  function okay(value) { lastError = 0; diagnostic = ''; return value; }
  function pattern(el) {
    var parts = String(el).split('.');
    for (var i = 1; i < parts.length; i++) if (ARRAYS[parts[i - 1]] && /^\d+$/.test(parts[i])) parts[i] = 'n';
    return parts.join('.');
  }
  function countOf(prefix) {
    var n = 0, head = prefix + '.', key, m;
    for (key in values) {
      if (key.indexOf(head) !== 0) continue;
      m = /^(\d+)\./.exec(key.slice(head.length));
      if (m && Number(m[1]) + 1 > n) n = Number(m[1]) + 1;
    }
    return n;
  }
  // Per-state error codes of the call names (RTE 2004 3.1.7; 1.2 uses 301 and 101).
  function guard(before, after) {
    if (state === 'new') return fail(v12 ? 301 : before, 'not initialized');
    if (state === 'terminated') return fail(v12 ? 101 : after, 'already terminated');
    return null;
  }

  function send(terminate, keepalive) {
    // Browse mode is untracked: the preview's writes stay in the page and Commit succeeds.
    if (!config.tracked) {
      pending = {};
      order = [];
      return true;
    }
    if (order.length === 0 && !terminate) return true;
    var body = { scoId: config.scoId, values: {}, terminate: !!terminate };
    if (attemptId) body.attemptId = attemptId;
    for (var i = 0; i < order.length; i++) body.values[order[i]] = pending[order[i]];
    if (keepalive) {
      if (typeof window.fetch === 'function') window.fetch(config.trackUrl, { method: 'POST', keepalive: true, credentials: 'same-origin', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      return true;
    }
    var xhr = new window.XMLHttpRequest();
    var res = null;
    try {
      xhr.open('POST', config.trackUrl, false);
      xhr.setRequestHeader('Content-Type', 'application/json');
      xhr.send(JSON.stringify(body));
      res = JSON.parse(xhr.responseText);
    } catch (e) {
      fail(E.commit, 'the LMS could not be reached');
      return false;
    }
    if (xhr.status >= 200 && xhr.status < 300 && res && res.data) {
      var a = res.data.attempts[0];
      attemptId = a.attemptId;
      pending = {};
      order = [];
      // The LMS's own determinations (mastery score, passing score, completion threshold).
      for (var key in a.lmsValues) values[key] = a.lmsValues[key];
      return true;
    }
    var errors = res && res.error && res.error.details && res.error.details.errors;
    if (errors && errors.length) {
      // Drop what the LMS refused and send the rest, so one bad value does not lose the others.
      for (var j = 0; j < errors.length; j++) {
        delete pending[errors[j].element];
        var at = order.indexOf(errors[j].element);
        if (at !== -1) order.splice(at, 1);
      }
      var first = errors[0];
      if (order.length > 0 || terminate) send(terminate, false);
      fail(first.code, first.message);
      return false;
    }
    fail(E.commit, (res && res.error && res.error.message) || 'HTTP ' + xhr.status);
    return false;
  }

  function initialize(arg) {
    if (arg !== '' && arg !== undefined) return fail(E.argument, 'the argument must be ""');
    if (state === 'running') return fail(E.already, 'already initialized');
    if (state === 'terminated') return fail(v12 ? 101 : 104, 'already terminated');
    state = 'running';
    return okay('true');
  }
  function terminate(arg) {
    if (arg !== '' && arg !== undefined) return fail(E.argument, 'the argument must be ""');
    var refused = guard(112, 113);
    if (refused) return refused;
    var sent = send(true, false);
    state = 'terminated';
    if (!sent) return 'false';
    return okay('true');
  }
  function getValue(el) {
    var refused = guard(122, 123);
    if (refused) return '';
    el = String(el === undefined ? '' : el);
    if (el === '') { fail(v12 ? 201 : 301, 'no element named'); return ''; }
    var p = pattern(el);
    if (/\._children$/.test(p)) {
      if (config.children[p] !== undefined) return okay(config.children[p]);
      fail(config.model[p.replace(/\._children$/, '')] || config.model[p] ? E.noChildren : E.unknown, 'no children'); return '';
    }
    if (/\._count$/.test(p)) {
      if (config.model[p]) return okay(String(countOf(el.replace(/\._count$/, ''))));
      fail(E.noCount, 'not an array'); return '';
    }
    var access = config.model[p];
    if (!access) { fail(E.unknown, el + ' is not in the data model'); return ''; }
    if (access === 'wo') { fail(E.writeOnly, el + ' is write only'); return ''; }
    if (Object.prototype.hasOwnProperty.call(values, el)) return okay(values[el]);
    if (E.notInitGet) { fail(E.notInitGet, el + ' has no value yet'); return ''; }
    return okay('');
  }
  function setValue(el, value) {
    var refused = guard(132, 133);
    if (refused) return refused;
    el = String(el === undefined ? '' : el);
    if (el === '') return fail(v12 ? 201 : 351, 'no element named');
    var p = pattern(el);
    if (/\._(children|count|version)$/.test(p)) return fail(config.model[p] || config.children[p] !== undefined ? E.keyword : E.unknown, el + ' is a keyword');
    var access = config.model[p];
    if (!access) return fail(E.unknown, el + ' is not in the data model');
    if (access === 'ro') return fail(E.readOnly, el + ' is read only');
    value = String(value);
    if (!Object.prototype.hasOwnProperty.call(pending, el)) order.push(el);
    pending[el] = value;
    values[el] = value;
    return okay('true');
  }
  function commit(arg) {
    if (arg !== '' && arg !== undefined) return fail(E.argument, 'the argument must be ""');
    var refused = guard(142, 143);
    if (refused) return refused;
    return send(false, false) ? okay('true') : 'false';
  }
  function getLastError() { return String(lastError); }
  function getErrorString(code) { return config.errors[String(code)] || ''; }
  function getDiagnostic() { return diagnostic; }

  if (v12) {
    window.API = { LMSInitialize: initialize, LMSFinish: terminate, LMSGetValue: getValue, LMSSetValue: setValue, LMSCommit: commit, LMSGetLastError: getLastError, LMSGetErrorString: getErrorString, LMSGetDiagnostic: getDiagnostic };
  } else {
    window.API_1484_11 = { version: '1.0', Initialize: initialize, Terminate: terminate, GetValue: getValue, SetValue: setValue, Commit: commit, GetLastError: getLastError, GetErrorString: getErrorString, GetDiagnostic: getDiagnostic };
  }
  // A window closed without Terminate: send what is queued (fetch keepalive outlives the page).
  if (typeof window.addEventListener === 'function') {
    window.addEventListener('pagehide', function () { if (state === 'running' && order.length > 0) send(false, true); });
  }
})`;

/** JSON safe inside an HTML <script> element (no `</script>`, no U+2028/2029 line breaks). */
const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The configuration the adapter is called with: the launch's values plus the version's element table and error strings. */
export function adapterConfig(config: RuntimeConfig) {
  return { ...config, model: accessTable(config.version), children: CHILDREN[config.version], errors: ERROR_STRINGS[config.version] };
}

/** The launch page: the adapter, then the SCO in a frame that fills the window. */
export function playerHtml(opts: { title: string; scoUrl: string; runtime: RuntimeConfig }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(opts.title)}</title>
<style>html,body{margin:0;height:100%;overflow:hidden}iframe{display:block;border:0;width:100%;height:100%}</style>
<script id="lms-scorm-runtime">${RUNTIME_JS}(window, ${scriptJson(adapterConfig(opts.runtime))});</script>
</head>
<body>
<iframe id="lms-scorm-sco" title="${escapeHtml(opts.title)}" src="${escapeHtml(opts.scoUrl)}" allow="fullscreen; autoplay"></iframe>
</body>
</html>
`;
}
