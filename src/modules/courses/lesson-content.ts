import type { Config } from '../../config.js';
import { validationError } from '../../platform/http/errors.js';
import type { LessonBlock } from './courses.tables.js';

/**
 * Fields of interactive blocks that give the answer away (`correctAnswer` of a question block,
 * `isCorrect` of an option, …). They are stripped, at any depth, from every block sent to
 * someone who cannot manage the course; answers are checked on the server.
 */
const ANSWER_FIELD = /^(correct\w*|is_?correct|answers?|answer_?keys?|accepted_?answers?|solutions?)$/i;

function stripAnswers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripAnswers);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !ANSWER_FIELD.test(k))
        .map(([k, v]) => [k, stripAnswers(v)]),
    );
  }
  return value;
}

/** The blocks as a learner may see them: answer fields removed. */
export const learnerBlocks = (blocks: LessonBlock[]): LessonBlock[] => blocks.map((b) => stripAnswers(b) as LessonBlock);

/** Block fields that hold a link the client will load or navigate to. */
const LINK_FIELD = /(url|href|src)$/i;

/**
 * A PDF lesson's `content` is the document's address, which clients load in a frame or link to.
 * Text that is not a URL is left alone (it is the author's business); a URL must be a web
 * address as in `assertWebLinks`, so `javascript:` and `data:` never reach a client.
 */
export function assertPdfContent(config: Pick<Config, 'NODE_ENV'>, type: string, content: string | null | undefined) {
  if (type !== 'PDF' || typeof content !== 'string' || !URL.canParse(content.trim())) return;
  assertWebLinks(config, { content: content.trim() });
}

/**
 * Links a client loads or follows must be web addresses: `https:` always, `http:` outside
 * production. `javascript:`, `data:` and anything else are refused (the schemas already refuse
 * what is not http or https; this adds the production rule and covers block fields).
 */
export function assertWebLinks(config: Pick<Config, 'NODE_ENV'>, fields: Record<string, string | null | undefined>, blocks?: LessonBlock[]) {
  const problems: Array<{ field: string; message: string }> = [];
  const check = (field: string, value: unknown) => {
    if (typeof value !== 'string') return;
    let protocol: string;
    try {
      protocol = new URL(value).protocol;
    } catch {
      problems.push({ field, message: 'must be an absolute https URL' });
      return;
    }
    if (protocol === 'https:' || (protocol === 'http:' && config.NODE_ENV !== 'production')) return;
    problems.push({ field, message: config.NODE_ENV === 'production' ? 'must be an https URL' : 'must be an http or https URL' });
  };
  for (const [field, value] of Object.entries(fields)) check(`body.${field}`, value);
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}.${i}`));
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (LINK_FIELD.test(k)) check(`${path}.${k}`, v);
        else walk(v, `${path}.${k}`);
      }
    }
  };
  blocks?.forEach((b, i) => walk(b, `body.blocks.${i}`));
  if (problems.length > 0) throw validationError('Links must be web addresses', problems);
}
