import { describe, expect, it } from 'vitest';
import { applyValues, evaluate, formatTimespan, patternOf, timespanSeconds } from './scorm.datamodel.js';
import { parseManifest } from './scorm.manifest.js';

const none = { masteryScore: null, scaledPassingScore: null, completionThreshold: null };

describe('SCORM data model', () => {
  it('reads record indices: no leading zeros, only after array names', () => {
    expect(patternOf('cmi.interactions.3.objectives.0.id')).toEqual({ pattern: 'cmi.interactions.n.objectives.n.id', indices: [3, 0], arrays: ['interactions', 'objectives'] });
    expect(patternOf('cmi.objectives.01.id')).toBeNull();
    expect(patternOf('cmi.core.3')).toEqual({ pattern: 'cmi.core.3', indices: [], arrays: [] });
  });

  it('1.2 timespans and 2004 intervals convert both ways', () => {
    expect(timespanSeconds('1.2', '0001:02:03.50')).toBe(3723.5);
    expect(timespanSeconds('1.2', '12:00:00')).toBe(43200);
    expect(formatTimespan('1.2', 3723.5)).toBe('0001:02:03.50');
    expect(timespanSeconds('2004', 'PT1H2M3.5S')).toBe(3723.5);
    expect(timespanSeconds('2004', 'P1DT1S')).toBe(86401);
    expect(formatTimespan('2004', 3723.5)).toBe('PT1H2M3.5S');
    expect(formatTimespan('2004', 0)).toBe('PT0H0M0S');
  });

  it('accepts valid values and refuses bad ones with the version’s codes', () => {
    const ok = applyValues('2004', {}, [
      ['cmi.session_time', 'P1Y2M3DT4H5M6.7S'],
      ['cmi.interactions.0.id', 'q'],
      ['cmi.interactions.0.type', 'numeric'],
      ['cmi.interactions.0.correct_responses.0.pattern', '[:]5'],
      ['cmi.interactions.0.learner_response', '-3.5'],
    ]);
    expect(ok.errors).toEqual([]);
    const bad = applyValues('2004', {}, [
      ['cmi.session_time', 'P'],
      ['cmi.session_time', 'PT'],
      ['cmi.session_time', 'PT1W'],
      ['cmi.comments_from_lms.0.comment', 'x'],
      ['cmi.objectives.100.id', 'x'],
    ]);
    expect(bad.errors.map((e) => e.code)).toEqual([406, 406, 406, 404, 351]);
    const v12 = applyValues('1.2', {}, [
      ['cmi.core.session_time', '1:00:00'],
      ['cmi.core.session_time', '0000:60:00'],
      ['cmi.interactions.0.time', '25:00:00'],
      ['cmi.core.lesson_status', 'browsed'],
    ]);
    expect(v12.errors.map((e) => [e.element, e.code])).toEqual([
      ['cmi.core.session_time', 405],
      ['cmi.core.session_time', 405],
      ['cmi.interactions.0.time', 405],
    ]);
  });

  it('evaluates: mastery overrides 1.2 status only with a raw score and credit; 2004 threshold and passing score', () => {
    expect(evaluate('1.2', { 'cmi.core.lesson_status': 'completed' }, { ...none, masteryScore: 80 }, true)).toMatchObject({ completed: true, successStatus: 'unknown' });
    expect(evaluate('1.2', { 'cmi.core.score.raw': '80' }, { ...none, masteryScore: 80 }, true)).toMatchObject({ completed: true, successStatus: 'passed' });
    expect(evaluate('1.2', { 'cmi.core.score.raw': '79', 'cmi.core.lesson_status': 'passed' }, { ...none, masteryScore: 80 }, false)).toMatchObject({ completed: true });
    expect(evaluate('1.2', { 'cmi.core.score.raw': '5', 'cmi.core.score.min': '0', 'cmi.core.score.max': '10' }, none, true).scorePercent).toBe(50);
    expect(evaluate('2004', { 'cmi.success_status': 'passed' }, none, true)).toMatchObject({ completed: true, completionStatus: 'unknown' });
    expect(evaluate('2004', { 'cmi.completion_status': 'completed', 'cmi.success_status': 'failed' }, none, true).completed).toBe(false);
    expect(evaluate('2004', { 'cmi.score.scaled': '-0.2' }, none, true).scorePercent).toBe(0);
    expect(evaluate('2004', { 'cmi.progress_measure': '0.8' }, { ...none, completionThreshold: 0.8 }, true)).toMatchObject({ completionStatus: 'completed', progressPercent: 80 });
  });
});

describe('SCORM manifest', () => {
  it('reads undeclared adlcp prefixes, a default namespace-free manifest and the 3rd edition completion threshold', () => {
    const m = parseManifest(`<manifest identifier="m"><metadata><schemaversion>2004 3rd Edition</schemaversion></metadata>
      <organizations><organization identifier="o"><title>T</title>
        <item identifier="i1"><title>Group</title>
          <item identifier="i2" identifierref="r1" isvisible="false" parameters="a=1"><title>Leaf</title><adlcp:completionThreshold>0.75</adlcp:completionThreshold></item>
        </item>
      </organization></organizations>
      <resources xml:base="x/"><resource identifier="r1" adlcp:scormType="sco" href="p%20q.html?z=2#top"/></resources></manifest>`);
    expect(m.version).toBe('2004');
    expect(m.organization[0]).toMatchObject({ identifier: 'i1', launchable: false, children: [{ identifier: 'i2', launchable: true, isVisible: false }] });
    expect(m.scos).toEqual([expect.objectContaining({ identifier: 'i2', launchPath: 'x/p q.html', launchQuery: '?z=2&a=1#top', completionThreshold: 0.75, isVisible: false })]);
  });

  it('a 1.2 package without an organization launches its SCO resources', () => {
    const m = parseManifest(`<manifest identifier="m" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
      <organizations/><resources><resource identifier="r" adlcp:scormtype="sco" href="a.html"/><resource identifier="s" adlcp:scormtype="asset" href="b.css"/></resources></manifest>`);
    expect(m.version).toBe('1.2');
    expect(m.scos.map((s) => [s.identifier, s.launchPath])).toEqual([['r', 'a.html']]);
  });
});
