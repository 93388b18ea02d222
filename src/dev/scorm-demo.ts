/**
 * The demo SCORM 1.2 package of the seeded "Virtual microscope lab" lesson: a real SCO that finds
 * the run-time API, restores its place on resume, saves it as the learner moves on, and reports a
 * score and completion. Built with yazl at seed time and imported through the same service as an
 * upload (`PUT /api/scorm/{id}/package`), so the demo exercises the whole path.
 */
import { Readable } from 'node:stream';
import { and, eq, like } from 'drizzle-orm';
import yazl from 'yazl';
import { serviceContext, type Deps } from '../platform/context.js';
import { serviceSession } from '../platform/auth/tokens.js';
import { courses, lessons } from '../modules/courses/courses.tables.js';
import { scormPackages } from '../modules/scorm/scorm.tables.js';
import { uploadPackage } from '../modules/scorm/scorm.service.js';

const MANIFEST = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="lms.demo.microscope" version="1.0"
  xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="microscope">
    <organization identifier="microscope">
      <title>Virtual microscope lab</title>
      <item identifier="lab" identifierref="lab_sco">
        <title>Virtual microscope lab</title>
        <adlcp:masteryscore>70</adlcp:masteryscore>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="lab_sco" type="webcontent" adlcp:scormtype="sco" href="index.html">
      <file href="index.html"/><file href="lab.css"/><file href="lab.js"/>
    </resource>
  </resources>
</manifest>
`;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Virtual microscope lab</title><link rel="stylesheet" href="lab.css"></head>
<body>
<main>
  <h1>Virtual microscope lab</h1>
  <section class="slide" data-n="0"><h2>1. Prepare the slide</h2><p>Place a drop of water on the slide, add the onion skin, lower the cover slip at an angle.</p></section>
  <section class="slide" data-n="1"><h2>2. Focus</h2><p>Start with the lowest objective; use the coarse knob, then the fine knob.</p></section>
  <section class="slide" data-n="2"><h2>3. Check</h2><p>Which part of the cell holds the nucleus?</p>
    <label><input type="radio" name="q" value="cytoplasm"> Cytoplasm</label>
    <label><input type="radio" name="q" value="wall"> Cell wall</label></section>
  <nav><button id="prev">Back</button><button id="next">Next</button><button id="save">Save and exit</button><button id="finish">Finish lab</button></nav>
  <p id="status"></p>
</main>
<script src="lab.js"></script>
</body></html>
`;

const CSS = `body{font-family:system-ui,sans-serif;margin:2rem;max-width:40rem}.slide{display:none}.slide.on{display:block}nav button{margin-right:.5rem}\n`;

const SCRIPT = `(function () {
  function findAPI(w) { for (var i = 0; w && i < 10; i++) { if (w.API) return w.API; if (w.parent === w) break; w = w.parent; } return null; }
  var api = findAPI(window.parent) || findAPI(window.opener);
  var slides = document.querySelectorAll('.slide');
  var at = 0;
  function show(n) { at = Math.max(0, Math.min(slides.length - 1, n)); for (var i = 0; i < slides.length; i++) slides[i].className = 'slide' + (i === at ? ' on' : ''); }
  function say(text) { document.getElementById('status').textContent = text; }
  if (!api) { say('No LMS connection: progress is not saved.'); show(0); return; }
  api.LMSInitialize('');
  var started = Date.now();
  var resumeAt = api.LMSGetValue('cmi.core.entry') === 'resume' ? Number(api.LMSGetValue('cmi.core.lesson_location') || 0) : 0;
  show(resumeAt);
  if (api.LMSGetValue('cmi.core.lesson_status') === 'not attempted') api.LMSSetValue('cmi.core.lesson_status', 'incomplete');
  function save() { api.LMSSetValue('cmi.core.lesson_location', String(at)); api.LMSSetValue('cmi.suspend_data', 'slide=' + at); api.LMSCommit(''); }
  function sessionTime() {
    var s = Math.round((Date.now() - started) / 1000), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    function two(n) { return (n < 10 ? '0' : '') + n; }
    return two(h) + ':' + two(m) + ':' + two(s % 60);
  }
  function finish(exit) { api.LMSSetValue('cmi.core.session_time', sessionTime()); api.LMSSetValue('cmi.core.exit', exit); api.LMSFinish(''); }
  document.getElementById('next').onclick = function () { show(at + 1); save(); };
  document.getElementById('prev').onclick = function () { show(at - 1); save(); };
  document.getElementById('save').onclick = function () { save(); finish('suspend'); say('Saved: you will continue here next time.'); };
  document.getElementById('finish').onclick = function () {
    var picked = document.querySelector('input[name=q]:checked');
    api.LMSSetValue('cmi.interactions.0.id', 'nucleus_location');
    api.LMSSetValue('cmi.interactions.0.type', 'choice');
    api.LMSSetValue('cmi.interactions.0.student_response', picked ? picked.value : '');
    api.LMSSetValue('cmi.interactions.0.result', picked && picked.value === 'cytoplasm' ? 'correct' : 'wrong');
    api.LMSSetValue('cmi.core.score.raw', picked && picked.value === 'cytoplasm' ? '100' : '40');
    api.LMSSetValue('cmi.core.lesson_status', 'completed');
    finish('');
    say('Lab finished: ' + api.LMSGetValue('cmi.core.lesson_status') + '.');
  };
})();
`;

/** The demo package as a zip. */
export function demoScormPackage(): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, text] of [
    ['imsmanifest.xml', MANIFEST],
    ['index.html', PAGE],
    ['lab.css', CSS],
    ['lab.js', SCRIPT],
  ] as const) {
    zip.addBuffer(Buffer.from(text), name);
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

/** Gives each seeded SCORM lesson of the institution without a package the demo package; returns how many it imported. */
export async function seedScormPackages(deps: Deps, institutionId: string): Promise<number> {
  const rows = await deps.database.db
    .select({ lessonId: lessons.id, ownerId: courses.ownerId, packageId: scormPackages.id })
    .from(lessons)
    .innerJoin(courses, and(eq(courses.institutionId, lessons.institutionId), eq(courses.id, lessons.courseId)))
    .leftJoin(scormPackages, and(eq(scormPackages.institutionId, lessons.institutionId), eq(scormPackages.lessonId, lessons.id), eq(scormPackages.status, 'CURRENT')))
    .where(and(eq(lessons.institutionId, institutionId), eq(lessons.type, 'SCORM'), like(lessons.id, 'seed\\_%')));
  let imported = 0;
  for (const row of rows.filter((r) => r.packageId === null)) {
    // The course owner uploads it (as an administrator, so a fallback owner id works too).
    const actor = serviceSession(institutionId, row.ownerId);
    const zip = await demoScormPackage();
    await uploadPackage(serviceContext(deps, actor, deps.log, null), row.lessonId, { contentType: 'application/zip', contentLength: zip.length, body: Readable.from([zip]) });
    imported++;
  }
  return imported;
}
