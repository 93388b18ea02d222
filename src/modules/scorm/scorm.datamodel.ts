/**
 * The CMI data models of SCORM 1.2 (RTE 1.2) and SCORM 2004 (RTE 4th edition): which elements
 * exist, who may read and write them, the type of each value, the rules of the indexed records
 * (objectives, interactions, comments), and the error codes each version gives. Pure functions,
 * shared by the track route (server-side validation) and the runtime adapter (the element table).
 */
import { DateTime, Duration } from 'luxon';
import type { ScormVersion } from './scorm.tables.js';

export type Access = 'ro' | 'rw' | 'wo';
export type CmiValues = Record<string, string>;

/** What went wrong with one element of a batch, with the version's error code. */
export interface CmiError {
  element: string;
  code: number;
  message: string;
}

type Issue = { kind: 'type' | 'range' | 'order' | 'dependency'; message: string };
type Check = (value: string, el: ElementContext) => Issue | null;

interface Definition {
  access: Access;
  check?: Check;
}

interface ElementContext {
  version: ScormVersion;
  element: string;
  /** The indices in the element name, outermost first. */
  indices: number[];
  values: CmiValues;
}

/** Error codes by kind, per version (RTE 1.2 §3.3.3; RTE 2004 4th ed. §3.1.7). */
const CODES = {
  '1.2': { unknown: 201, keyword: 402, readOnly: 403, writeOnly: 404, type: 405, range: 405, order: 201, dependency: 201 },
  '2004': { unknown: 401, keyword: 404, readOnly: 404, writeOnly: 405, type: 406, range: 407, order: 351, dependency: 408 },
} as const;

export const ERROR_STRINGS: Record<ScormVersion, Record<number, string>> = {
  '1.2': {
    0: 'No error',
    101: 'General exception',
    201: 'Invalid argument error',
    202: 'Element cannot have children',
    203: 'Element not an array - cannot have count',
    301: 'Not initialized',
    401: 'Not implemented error',
    402: 'Invalid set value, element is a keyword',
    403: 'Element is read only',
    404: 'Element is write only',
    405: 'Incorrect data type',
  },
  '2004': {
    0: 'No error',
    101: 'General exception',
    102: 'General initialization failure',
    103: 'Already initialized',
    104: 'Content instance terminated',
    111: 'General termination failure',
    112: 'Termination before initialization',
    113: 'Termination after termination',
    122: 'Retrieve data before initialization',
    123: 'Retrieve data after termination',
    132: 'Store data before initialization',
    133: 'Store data after termination',
    142: 'Commit before initialization',
    143: 'Commit after termination',
    201: 'General argument error',
    301: 'General get failure',
    351: 'General set failure',
    391: 'General commit failure',
    401: 'Undefined data model element',
    402: 'Unimplemented data model element',
    403: 'Data model element value not initialized',
    404: 'Data model element is read only',
    405: 'Data model element is write only',
    406: 'Data model element type mismatch',
    407: 'Data model element value out of range',
    408: 'Data model dependency not established',
  },
};

// ── value types ────────────────────────────────────────────────────────────────

const typeIssue = (message: string): Issue => ({ kind: 'type', message });
const rangeIssue = (message: string): Issue => ({ kind: 'range', message });
const chars = (s: string) => [...s].length;

const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)$/;
const isDecimal = (v: string) => DECIMAL.test(v) && Number.isFinite(Number(v));

const vocabulary =
  (words: readonly string[], what: string): Check =>
  (v) =>
    words.includes(v) ? null : typeIssue(`${what} must be one of ${words.map((w) => JSON.stringify(w)).join(', ')}`);

/** 1.2: a string of at most `max` characters (CMIString255, CMIString4096). */
const string12 =
  (max: number): Check =>
  (v) =>
    chars(v) <= max ? null : typeIssue(`at most ${max} characters`);

/** 2004: characterstring with its smallest permitted maximum; longer values are refused. */
const string2004 =
  (spm: number): Check =>
  (v) =>
    chars(v) <= spm ? null : rangeIssue(`at most ${spm} characters`);

/** 2004 localized_string_type: an optional `{lang=xx}` delimiter, then at most `spm` characters. */
const localized =
  (spm: number): Check =>
  (v) => {
    const m = /^\{lang=([^}]*)\}/.exec(v);
    if (m && !isLanguage(m[1]!)) return typeIssue('the {lang=} delimiter needs a language code');
    return chars(m ? v.slice(m[0].length) : v) <= spm ? null : rangeIssue(`at most ${spm} characters`);
  };

const LANGUAGE = /^([a-zA-Z]{1,8}|i|x)(-[a-zA-Z0-9]{1,8})*$/;
const isLanguage = (v: string) => LANGUAGE.test(v);

/** A real number, optionally within [min, max]. */
const real =
  (min?: number, max?: number): Check =>
  (v) => {
    if (!isDecimal(v)) return typeIssue('must be a decimal number');
    const n = Number(v);
    if ((min !== undefined && n < min) || (max !== undefined && n > max)) return rangeIssue(`must be from ${min ?? '-∞'} to ${max ?? '∞'}`);
    return null;
  };

/** 1.2 score: CMIDecimal from 0 to 100, or blank. */
const score12: Check = (v) => {
  if (v === '') return null;
  if (!isDecimal(v)) return typeIssue('must be a decimal number or blank');
  const n = Number(v);
  return n < 0 || n > 100 ? rangeIssue('must be from 0 to 100') : null;
};

const integerIn =
  (min: number, max: number): Check =>
  (v) => {
    if (!/^[-+]?\d+$/.test(v)) return typeIssue('must be an integer');
    const n = Number(v);
    return n < min || n > max ? rangeIssue(`must be from ${min} to ${max}`) : null;
  };

/** 1.2 CMIIdentifier: no white space, 1 to 255 characters. */
const identifier12: Check = (v) => (/^[^\s\p{C}]{1,255}$/u.test(v) ? null : typeIssue('must be an identifier: 1 to 255 characters, no white space'));

/** 2004 long_identifier_type: a URI without white space, at most 4000 characters; a URN needs a namespace id. */
const longIdentifier: Check = (v) => {
  if (v === '' || /[\s\p{C}]/u.test(v)) return typeIssue('must be an identifier (a URI) without white space');
  if (/^urn:/i.test(v) && !/^urn:[a-z0-9][a-z0-9-]{0,31}:\S+$/i.test(v)) return typeIssue('a urn: identifier needs a namespace id and a specific string');
  return chars(v) <= 4000 ? null : rangeIssue('at most 4000 characters');
};

const shortIdentifier = (v: string) => v !== '' && chars(v) <= 250 && !/[\s\p{C}]/u.test(v);

/** 1.2 CMITimespan: HHHH:MM:SS.SS (hours 2 to 4 digits, optional 1 or 2 decimals). */
export const TIMESPAN_12 = /^(\d{2,4}):([0-5]\d):([0-5]\d)(\.\d{1,2})?$/;
const timespan12: Check = (v) => (TIMESPAN_12.test(v) ? null : typeIssue('must be a CMITimespan HHHH:MM:SS.SS'));

/** 1.2 CMITime: HH:MM:SS.SS within a day. */
const time12: Check = (v) => (/^([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,2})?$/.test(v) ? null : typeIssue('must be a CMITime HH:MM:SS.SS'));

/** 2004 timeinterval (second,10,2): an ISO 8601 duration P[yY][mM][dD][T[hH][mM][s[.s]S]], at least one part. */
export const TIMEINTERVAL = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;
const timeinterval: Check = (v) => {
  if (!TIMEINTERVAL.test(v) || v === 'P' || v.endsWith('T') || !Duration.fromISO(v).isValid) return typeIssue('must be an ISO 8601 duration such as PT1H30M5S');
  return null;
};

/** 2004 time (second,10,0): YYYY[-MM[-DD[Thh[:mm[:ss[.s][TZD]]]]]], years 1970 to 2038. */
const TIME_2004 = /^(\d{4})(-(\d{2})(-(\d{2})(T(\d{2})(:(\d{2})(:(\d{2})(\.\d{1,2})?)?)?(Z|[+-]\d{2}(:\d{2})?)?)?)?)?$/;
const time2004: Check = (v) => {
  const m = TIME_2004.exec(v);
  if (!m || !DateTime.fromISO(v, { setZone: true }).isValid) return typeIssue('must be an ISO 8601 time such as 2026-03-02T10:00:00Z');
  const year = Number(m[1]);
  return year < 1970 || year > 2038 ? rangeIssue('years 1970 to 2038') : null;
};

// ── 1.2 ────────────────────────────────────────────────────────────────────────

const LESSON_STATUS_WRITE = ['passed', 'completed', 'failed', 'incomplete', 'browsed'] as const;
const OBJECTIVE_STATUS_12 = ['passed', 'completed', 'failed', 'incomplete', 'browsed', 'not attempted'] as const;
const INTERACTION_TYPES_12 = ['true-false', 'choice', 'fill-in', 'matching', 'performance', 'sequencing', 'likert', 'numeric'] as const;

const lessonStatus12: Check = (v) =>
  v === 'not attempted' ? typeIssue('a SCO may not set "not attempted"') : vocabulary(LESSON_STATUS_WRITE, 'cmi.core.lesson_status')(v, undefined as never);

const result12: Check = (v) =>
  ['correct', 'wrong', 'unanticipated', 'neutral'].includes(v) || isDecimal(v) ? null : typeIssue('must be correct, wrong, unanticipated, neutral or a decimal');

const MODEL_12: Record<string, Definition> = {
  'cmi._children': { access: 'ro' },
  'cmi.core._children': { access: 'ro' },
  'cmi.core.student_id': { access: 'ro' },
  'cmi.core.student_name': { access: 'ro' },
  'cmi.core.lesson_location': { access: 'rw', check: string12(255) },
  'cmi.core.credit': { access: 'ro' },
  'cmi.core.lesson_status': { access: 'rw', check: lessonStatus12 },
  'cmi.core.entry': { access: 'ro' },
  'cmi.core.score._children': { access: 'ro' },
  'cmi.core.score.raw': { access: 'rw', check: score12 },
  'cmi.core.score.min': { access: 'rw', check: score12 },
  'cmi.core.score.max': { access: 'rw', check: score12 },
  'cmi.core.total_time': { access: 'ro' },
  'cmi.core.lesson_mode': { access: 'ro' },
  'cmi.core.exit': { access: 'wo', check: vocabulary(['time-out', 'suspend', 'logout', ''], 'cmi.core.exit') },
  'cmi.core.session_time': { access: 'wo', check: timespan12 },
  'cmi.suspend_data': { access: 'rw', check: string12(4096) },
  'cmi.launch_data': { access: 'ro' },
  'cmi.comments': { access: 'rw', check: string12(4096) },
  'cmi.comments_from_lms': { access: 'ro' },
  'cmi.objectives._children': { access: 'ro' },
  'cmi.objectives._count': { access: 'ro' },
  'cmi.objectives.n.id': { access: 'rw', check: identifier12 },
  'cmi.objectives.n.score._children': { access: 'ro' },
  'cmi.objectives.n.score.raw': { access: 'rw', check: score12 },
  'cmi.objectives.n.score.min': { access: 'rw', check: score12 },
  'cmi.objectives.n.score.max': { access: 'rw', check: score12 },
  'cmi.objectives.n.status': { access: 'rw', check: vocabulary(OBJECTIVE_STATUS_12, 'an objective status') },
  'cmi.student_data._children': { access: 'ro' },
  'cmi.student_data.mastery_score': { access: 'ro' },
  'cmi.student_data.max_time_allowed': { access: 'ro' },
  'cmi.student_data.time_limit_action': { access: 'ro' },
  'cmi.student_preference._children': { access: 'ro' },
  'cmi.student_preference.audio': { access: 'rw', check: integerIn(-1, 100) },
  'cmi.student_preference.language': { access: 'rw', check: string12(255) },
  'cmi.student_preference.speed': { access: 'rw', check: integerIn(-100, 100) },
  'cmi.student_preference.text': { access: 'rw', check: integerIn(-1, 1) },
  'cmi.interactions._children': { access: 'ro' },
  'cmi.interactions._count': { access: 'ro' },
  'cmi.interactions.n.id': { access: 'wo', check: identifier12 },
  'cmi.interactions.n.objectives._count': { access: 'ro' },
  'cmi.interactions.n.objectives.n.id': { access: 'wo', check: identifier12 },
  'cmi.interactions.n.time': { access: 'wo', check: time12 },
  'cmi.interactions.n.type': { access: 'wo', check: vocabulary(INTERACTION_TYPES_12, 'an interaction type') },
  'cmi.interactions.n.correct_responses._count': { access: 'ro' },
  'cmi.interactions.n.correct_responses.n.pattern': { access: 'wo', check: string12(255) },
  'cmi.interactions.n.weighting': { access: 'wo', check: real() },
  'cmi.interactions.n.student_response': { access: 'wo', check: string12(255) },
  'cmi.interactions.n.result': { access: 'wo', check: result12 },
  'cmi.interactions.n.latency': { access: 'wo', check: timespan12 },
};

// ── 2004 ───────────────────────────────────────────────────────────────────────

export const COMPLETION_STATUSES = ['completed', 'incomplete', 'not attempted', 'unknown'] as const;
export const SUCCESS_STATUSES = ['passed', 'failed', 'unknown'] as const;
const INTERACTION_TYPES_2004 = ['true-false', 'choice', 'fill-in', 'long-fill-in', 'likert', 'matching', 'performance', 'sequencing', 'numeric', 'other'] as const;
const NAV_REQUEST = /^(continue|previous|exit|exitAll|abandon|abandonAll|suspendAll|_none_|\{target=[^\s{}]+\}(choice|jump))$/;

const result2004: Check = (v) =>
  ['correct', 'incorrect', 'unanticipated', 'neutral'].includes(v) || isDecimal(v) ? null : typeIssue('must be correct, incorrect, unanticipated, neutral or a real number');

/** The type of interaction `n` (2004), which learner_response and correct_responses depend on. */
const interactionType = (el: ElementContext) => el.values[`cmi.interactions.${el.indices[0]}.type`];

const needsType =
  (forResponse: boolean): Check =>
  (v, el) => {
    const type = interactionType(el);
    if (!type) return { kind: 'dependency', message: `set cmi.interactions.${el.indices[0]}.type first` };
    return responseFormat(type, v, forResponse);
  };

/** Learner responses and correct-response patterns by interaction type (RTE 2004 §4.2.9); other types as strings. */
function responseFormat(type: string, v: string, forResponse: boolean): Issue | null {
  switch (type) {
    case 'true-false':
      return v === 'true' || v === 'false' ? null : typeIssue('a true-false response is "true" or "false"');
    case 'choice': {
      if (v === '') return null;
      const ids = v.split('[,]');
      if (!ids.every(shortIdentifier)) return typeIssue('a choice response is identifiers separated by [,]');
      return new Set(ids).size === ids.length ? null : typeIssue('a choice response names each choice once');
    }
    case 'likert':
      return shortIdentifier(v) ? null : typeIssue('a likert response is one identifier');
    case 'numeric':
      if (forResponse) return isDecimal(v) ? null : typeIssue('a numeric response is a real number');
      return /^([-+]?(\d+\.?\d*|\.\d+))?(\[:\]([-+]?(\d+\.?\d*|\.\d+))?)?$/.test(v) && v !== '' ? null : typeIssue('a numeric pattern is min[:]max');
    default:
      return chars(v) <= 4000 ? null : rangeIssue('at most 4000 characters');
  }
}

/** One correct response only for true-false, likert and numeric interactions. */
const pattern2004: Check = (v, el) => {
  const type = interactionType(el);
  if (type && ['true-false', 'likert', 'numeric'].includes(type) && el.indices[1]! > 0) return { kind: 'order', message: `a ${type} interaction has one correct response` };
  return needsType(false)(v, el);
};

/** Identifiers of records: once set they do not change, and they are unique among their siblings (RTE 2004: 351). */
const recordId =
  (siblingsOf: (el: ElementContext) => string[]): Check =>
  (v, el) => {
    const issue = longIdentifier(v, el);
    if (issue) return issue;
    const current = el.values[el.element];
    if (current !== undefined && current !== v) return { kind: 'order', message: 'an identifier cannot change once set' };
    if (siblingsOf(el).some((other) => other !== el.element && el.values[other] === v)) return { kind: 'order', message: `the identifier ${v} is already used` };
    return null;
  };

const siblingKeys = (values: CmiValues, pattern: RegExp) => Object.keys(values).filter((k) => pattern.test(k));

const MODEL_2004: Record<string, Definition> = {
  'cmi._version': { access: 'ro' },
  'cmi.comments_from_learner._children': { access: 'ro' },
  'cmi.comments_from_learner._count': { access: 'ro' },
  'cmi.comments_from_learner.n.comment': { access: 'rw', check: localized(4000) },
  'cmi.comments_from_learner.n.location': { access: 'rw', check: string2004(250) },
  'cmi.comments_from_learner.n.timestamp': { access: 'rw', check: time2004 },
  'cmi.comments_from_lms._children': { access: 'ro' },
  'cmi.comments_from_lms._count': { access: 'ro' },
  'cmi.comments_from_lms.n.comment': { access: 'ro' },
  'cmi.comments_from_lms.n.location': { access: 'ro' },
  'cmi.comments_from_lms.n.timestamp': { access: 'ro' },
  'cmi.completion_status': { access: 'rw', check: vocabulary(COMPLETION_STATUSES, 'cmi.completion_status') },
  'cmi.completion_threshold': { access: 'ro' },
  'cmi.credit': { access: 'ro' },
  'cmi.entry': { access: 'ro' },
  'cmi.exit': { access: 'wo', check: vocabulary(['time-out', 'suspend', 'logout', 'normal', ''], 'cmi.exit') },
  'cmi.interactions._children': { access: 'ro' },
  'cmi.interactions._count': { access: 'ro' },
  'cmi.interactions.n.id': { access: 'rw', check: recordId((el) => [`cmi.interactions.${el.indices[0]}.id`]) },
  'cmi.interactions.n.type': { access: 'rw', check: vocabulary(INTERACTION_TYPES_2004, 'an interaction type') },
  'cmi.interactions.n.objectives._count': { access: 'ro' },
  'cmi.interactions.n.objectives.n.id': {
    access: 'rw',
    check: recordId((el) => siblingKeys(el.values, new RegExp(`^cmi\\.interactions\\.${el.indices[0]}\\.objectives\\.\\d+\\.id$`))),
  },
  'cmi.interactions.n.timestamp': { access: 'rw', check: time2004 },
  'cmi.interactions.n.correct_responses._count': { access: 'ro' },
  'cmi.interactions.n.correct_responses.n.pattern': { access: 'rw', check: pattern2004 },
  'cmi.interactions.n.weighting': { access: 'rw', check: real() },
  'cmi.interactions.n.learner_response': { access: 'rw', check: needsType(true) },
  'cmi.interactions.n.result': { access: 'rw', check: result2004 },
  'cmi.interactions.n.latency': { access: 'rw', check: timeinterval },
  'cmi.interactions.n.description': { access: 'rw', check: localized(250) },
  'cmi.launch_data': { access: 'ro' },
  'cmi.learner_id': { access: 'ro' },
  'cmi.learner_name': { access: 'ro' },
  'cmi.learner_preference._children': { access: 'ro' },
  'cmi.learner_preference.audio_level': { access: 'rw', check: real(0) },
  'cmi.learner_preference.language': { access: 'rw', check: (v) => (v === '' || isLanguage(v) ? null : typeIssue('must be a language code such as en-US')) },
  'cmi.learner_preference.delivery_speed': { access: 'rw', check: real(0) },
  'cmi.learner_preference.audio_captioning': { access: 'rw', check: vocabulary(['-1', '0', '1'], 'cmi.learner_preference.audio_captioning') },
  'cmi.location': { access: 'rw', check: string2004(1000) },
  'cmi.max_time_allowed': { access: 'ro' },
  'cmi.mode': { access: 'ro' },
  'cmi.objectives._children': { access: 'ro' },
  'cmi.objectives._count': { access: 'ro' },
  'cmi.objectives.n.id': { access: 'rw', check: recordId((el) => siblingKeys(el.values, /^cmi\.objectives\.\d+\.id$/)) },
  'cmi.objectives.n.score._children': { access: 'ro' },
  'cmi.objectives.n.score.scaled': { access: 'rw', check: real(-1, 1) },
  'cmi.objectives.n.score.raw': { access: 'rw', check: real() },
  'cmi.objectives.n.score.min': { access: 'rw', check: real() },
  'cmi.objectives.n.score.max': { access: 'rw', check: real() },
  'cmi.objectives.n.success_status': { access: 'rw', check: vocabulary(SUCCESS_STATUSES, 'an objective success_status') },
  'cmi.objectives.n.completion_status': { access: 'rw', check: vocabulary(COMPLETION_STATUSES, 'an objective completion_status') },
  'cmi.objectives.n.progress_measure': { access: 'rw', check: real(0, 1) },
  'cmi.objectives.n.description': { access: 'rw', check: localized(250) },
  'cmi.progress_measure': { access: 'rw', check: real(0, 1) },
  'cmi.scaled_passing_score': { access: 'ro' },
  'cmi.score._children': { access: 'ro' },
  'cmi.score.scaled': { access: 'rw', check: real(-1, 1) },
  'cmi.score.raw': { access: 'rw', check: real() },
  'cmi.score.min': { access: 'rw', check: real() },
  'cmi.score.max': { access: 'rw', check: real() },
  'cmi.session_time': { access: 'wo', check: timeinterval },
  'cmi.success_status': { access: 'rw', check: vocabulary(SUCCESS_STATUSES, 'cmi.success_status') },
  'cmi.suspend_data': { access: 'rw', check: string2004(64000) },
  'cmi.time_limit_action': { access: 'ro' },
  'cmi.total_time': { access: 'ro' },
  // Navigation requests are stored; sequencing is not run (README "SCORM").
  'adl.nav.request': { access: 'rw', check: (v) => (NAV_REQUEST.test(v) ? null : typeIssue('must be a navigation request such as continue, previous or exitAll')) },
};

export const MODELS: Record<ScormVersion, Record<string, Definition>> = { '1.2': MODEL_12, '2004': MODEL_2004 };

/** The `_children` keyword values (by element pattern). */
export const CHILDREN: Record<ScormVersion, Record<string, string>> = {
  '1.2': {
    'cmi._children': 'core,suspend_data,launch_data,comments,objectives,student_data,student_preference,interactions',
    'cmi.core._children': 'student_id,student_name,lesson_location,credit,lesson_status,entry,score,total_time,lesson_mode,exit,session_time',
    'cmi.core.score._children': 'raw,min,max',
    'cmi.objectives._children': 'id,score,status',
    'cmi.objectives.n.score._children': 'raw,min,max',
    'cmi.student_data._children': 'mastery_score,max_time_allowed,time_limit_action',
    'cmi.student_preference._children': 'audio,language,speed,text',
    'cmi.interactions._children': 'id,objectives,time,type,correct_responses,weighting,student_response,result,latency',
  },
  '2004': {
    'cmi.comments_from_learner._children': 'comment,location,timestamp',
    'cmi.comments_from_lms._children': 'comment,location,timestamp',
    'cmi.interactions._children': 'id,type,objectives,timestamp,correct_responses,weighting,learner_response,result,latency,description',
    'cmi.learner_preference._children': 'audio_level,language,delivery_speed,audio_captioning',
    'cmi.objectives._children': 'id,score,success_status,completion_status,progress_measure,description',
    'cmi.objectives.n.score._children': 'scaled,raw,min,max',
    'cmi.score._children': 'scaled,raw,min,max',
  },
};

/** Records and the most each may hold (the data model's smallest permitted maxima). */
const ARRAYS: Record<string, number> = {
  objectives: 100,
  interactions: 250,
  correct_responses: 250,
  comments_from_learner: 250,
  comments_from_lms: 250,
};

/** `cmi.interactions.3.objectives.0.id` → pattern `cmi.interactions.n.objectives.n.id` and indices [3, 0]; null for a malformed index. */
export function patternOf(element: string): { pattern: string; indices: number[]; arrays: string[] } | null {
  const parts = element.split('.');
  const indices: number[] = [];
  const arrays: string[] = [];
  for (let i = 1; i < parts.length; i++) {
    const prev = parts[i - 1]!;
    if (ARRAYS[prev] !== undefined && /^\d+$/.test(parts[i]!) && !parts[i]!.startsWith('-')) {
      // No leading zeros and no absurd numbers: "01" is not an index.
      if (parts[i]!.length > 1 && parts[i]!.startsWith('0')) return null;
      if (parts[i]!.length > 6) return null;
      indices.push(Number(parts[i]));
      arrays.push(prev);
      parts[i] = 'n';
    }
  }
  return { pattern: parts.join('.'), indices, arrays };
}

/** Number of records stored under `prefix` (`cmi.objectives`, `cmi.interactions.2.correct_responses`). */
export function countOf(values: CmiValues, prefix: string): number {
  const head = `${prefix}.`;
  let count = 0;
  for (const key of Object.keys(values)) {
    if (!key.startsWith(head)) continue;
    const m = /^(\d+)\./.exec(key.slice(head.length));
    if (m) count = Math.max(count, Number(m[1]) + 1);
  }
  return count;
}

const isKeyword = (pattern: string) => /\._(children|count|version)$/.test(pattern);

/**
 * Applies a batch of SetValue calls, in order, to a copy of the stored values (so a batch may
 * create `cmi.objectives.0.id` and then set `cmi.objectives.0.score.raw`). Returns the new values
 * and every refused element with the version's error code; the caller stores nothing when any
 * element is refused.
 */
export function applyValues(version: ScormVersion, current: CmiValues, changes: Array<[string, string]>): { values: CmiValues; errors: CmiError[] } {
  const model = MODELS[version];
  const codes = CODES[version];
  const values: CmiValues = { ...current };
  const errors: CmiError[] = [];
  for (const [element, value] of changes) {
    const refuse = (code: number, message: string) => errors.push({ element, code, message: `${element}: ${message}` });
    const parsed = patternOf(element);
    const def = parsed ? model[parsed.pattern] : undefined;
    if (!parsed || !def) {
      refuse(codes.unknown, 'not an element of the SCORM ' + version + ' data model');
      continue;
    }
    if (isKeyword(parsed.pattern)) {
      refuse(codes.keyword, version === '1.2' ? 'is a keyword and cannot be set' : 'is read only');
      continue;
    }
    if (def.access === 'ro') {
      refuse(codes.readOnly, 'is read only');
      continue;
    }
    // Record indices: an existing record, or the next one (n = _count); never a gap.
    const orderIssue = checkIndices(version, element, parsed, values);
    if (orderIssue) {
      refuse(codes[orderIssue.kind], orderIssue.message);
      continue;
    }
    const issue = def.check?.(value, { version, element, indices: parsed.indices, values }) ?? null;
    if (issue) {
      refuse(codes[issue.kind], issue.message);
      continue;
    }
    values[element] = value;
  }
  return { values, errors };
}

function checkIndices(version: ScormVersion, element: string, parsed: { pattern: string; indices: number[]; arrays: string[] }, values: CmiValues): Issue | null {
  if (parsed.indices.length === 0) return null;
  const parts = element.split('.');
  let prefix = parts[0]!;
  let arrayAt = 0;
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!;
    if (arrayAt < parsed.indices.length && parsed.arrays[arrayAt] === parts[i - 1] && String(parsed.indices[arrayAt]) === part) {
      const n = parsed.indices[arrayAt]!;
      const max = ARRAYS[parsed.arrays[arrayAt]!]!;
      if (n >= max) return { kind: 'order', message: `at most ${max} ${parsed.arrays[arrayAt]} records are kept` };
      const count = countOf(values, prefix);
      if (n > count) return { kind: 'order', message: `index ${n} skips records: the next one is ${count}` };
      if (n === count && version === '2004') {
        // A new objective or interaction starts with its id (RTE 2004 4.2.9, 4.2.17).
        const rest = parts.slice(i + 1).join('.');
        const needsId = ['objectives', 'interactions'].includes(parsed.arrays[arrayAt]!) && arrayAt === 0;
        if (needsId && rest !== 'id') return { kind: 'dependency', message: `set ${prefix}.${n}.id first` };
      }
      arrayAt++;
    }
    prefix = `${prefix}.${part}`;
  }
  return null;
}

/** Access of an element (by pattern), for reads: undefined when the element does not exist. */
export function accessOf(version: ScormVersion, element: string): Access | undefined {
  const parsed = patternOf(element);
  return parsed ? MODELS[version][parsed.pattern]?.access : undefined;
}

// ── time ───────────────────────────────────────────────────────────────────────

/** Seconds of a 1.2 CMITimespan or a 2004 timeinterval (0 for anything else). */
export function timespanSeconds(version: ScormVersion, value: string | undefined): number {
  if (!value) return 0;
  if (version === '1.2') {
    const m = TIMESPAN_12.exec(value);
    return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4] ?? 0) : 0;
  }
  const d = Duration.fromISO(value);
  return d.isValid ? d.as('seconds') : 0;
}

/** Seconds as 1.2 CMITimespan (`0001:02:03.50`) or 2004 timeinterval (`PT1H2M3.5S`). */
export function formatTimespan(version: ScormVersion, seconds: number): string {
  const total = Math.max(0, Math.round(seconds * 100) / 100);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total - h * 3600) / 60);
  const s = Math.round((total - h * 3600 - m * 60) * 100) / 100;
  if (version === '1.2') {
    const [whole, frac = '00'] = s.toFixed(2).split('.');
    return `${String(Math.min(h, 9999)).padStart(4, '0')}:${String(m).padStart(2, '0')}:${whole!.padStart(2, '0')}.${frac}`;
  }
  return `PT${h}H${m}M${Number(s.toFixed(2))}S`;
}

// ── evaluation: statuses and score ─────────────────────────────────────────────

export interface ScoSettings {
  masteryScore: number | null;
  scaledPassingScore: number | null;
  completionThreshold: number | null;
}

export interface Evaluation {
  /** The values with the LMS's own determinations written back (1.2 mastery; 2004 threshold and passing score). */
  values: CmiValues;
  completionStatus: string;
  successStatus: string;
  /** 0–100, or null when the SCO reported no score. */
  scorePercent: number | null;
  /** 0–100 from 2004 progress_measure, or null. */
  progressPercent: number | null;
  /** The lesson rule: completed and not failed, or passed. */
  completed: boolean;
}

const num = (v: string | undefined) => (v !== undefined && v !== '' && isDecimal(v) ? Number(v) : null);
const clampPercent = (n: number) => Math.max(0, Math.min(100, Math.round(n * 100) / 100));

/** raw within [min, max] as a percentage; raw alone is read as a percentage (the 1.2 range). */
function rawPercent(raw: number | null, min: number | null, max: number | null): number | null {
  if (raw === null) return null;
  if (min !== null && max !== null && max > min) return clampPercent(((raw - min) / (max - min)) * 100);
  return clampPercent(raw);
}

/**
 * The statuses and score of an attempt after a batch, with the LMS determinations of each version:
 * 1.2: with a mastery score and a raw score (credit), lesson_status becomes passed (raw ≥ mastery)
 * or failed. 2004: with a completion threshold and a progress measure, completion_status is
 * completed at or above it, else incomplete; with a scaled passing score and a scaled score,
 * success_status is passed at or above it, else failed.
 */
export function evaluate(version: ScormVersion, input: CmiValues, sco: ScoSettings, credit: boolean): Evaluation {
  const values = { ...input };
  if (version === '1.2') {
    const raw = num(values['cmi.core.score.raw']);
    let status = values['cmi.core.lesson_status'] ?? 'not attempted';
    if (credit && sco.masteryScore !== null && raw !== null && status !== 'browsed') {
      status = raw >= sco.masteryScore ? 'passed' : 'failed';
      values['cmi.core.lesson_status'] = status;
    }
    const completionStatus = ['completed', 'passed', 'failed'].includes(status) ? 'completed' : status === 'not attempted' ? 'not attempted' : 'incomplete';
    const successStatus = status === 'passed' ? 'passed' : status === 'failed' ? 'failed' : 'unknown';
    return {
      values,
      completionStatus,
      successStatus,
      scorePercent: rawPercent(raw, num(values['cmi.core.score.min']), num(values['cmi.core.score.max'])),
      progressPercent: null,
      completed: status === 'completed' || status === 'passed',
    };
  }
  // SCORM 2004 RTE 4.2.4.1 and 4.2.22.1: with a completion threshold (a scaled passing score) the
  // status is the measure compared with it, and "unknown" while the SCO has set no measure,
  // whatever status it wrote itself.
  let completionStatus = values['cmi.completion_status'] ?? 'unknown';
  const progress = num(values['cmi.progress_measure']);
  if (sco.completionThreshold !== null) {
    completionStatus = progress === null ? 'unknown' : progress >= sco.completionThreshold ? 'completed' : 'incomplete';
    values['cmi.completion_status'] = completionStatus;
  }
  let successStatus = values['cmi.success_status'] ?? 'unknown';
  const scaled = num(values['cmi.score.scaled']);
  if (sco.scaledPassingScore !== null) {
    successStatus = scaled === null ? 'unknown' : scaled >= sco.scaledPassingScore ? 'passed' : 'failed';
    values['cmi.success_status'] = successStatus;
  }
  const scorePercent = scaled !== null ? clampPercent(scaled * 100) : rawPercent(num(values['cmi.score.raw']), num(values['cmi.score.min']), num(values['cmi.score.max']));
  return {
    values,
    completionStatus,
    successStatus,
    scorePercent,
    progressPercent: progress !== null ? clampPercent(progress * 100) : null,
    completed: (completionStatus === 'completed' && successStatus !== 'failed') || successStatus === 'passed',
  };
}

/** The exit element and session time element of each version. */
export const EXIT_ELEMENT: Record<ScormVersion, string> = { '1.2': 'cmi.core.exit', '2004': 'cmi.exit' };
export const SESSION_TIME_ELEMENT: Record<ScormVersion, string> = { '1.2': 'cmi.core.session_time', '2004': 'cmi.session_time' };

/** The element table the runtime adapter uses for reads and for refusing writes to read-only elements. */
export function accessTable(version: ScormVersion): Record<string, Access> {
  return Object.fromEntries(Object.entries(MODELS[version]).map(([k, d]) => [k, d.access]));
}
