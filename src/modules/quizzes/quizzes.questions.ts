/**
 * The pure rules of quizzes: checking an author's questions, the two views of a question (course
 * staff with the answer key, learners without), checking a learner's answers, and grading.
 * No database and no clock here, so each rule has a unit test (quizzes.questions.test.ts).
 */
import { createHash } from 'node:crypto';
import { validationError } from '../../platform/http/errors.js';
import type { QuestionDto, QuestionInput } from './quizzes.schemas.js';
import type { QuestionResult, StoredAnswer, StoredQuestion } from './quizzes.tables.js';

type Problem = { field: string; message: string };

const CHOICE = new Set<StoredQuestion['type']>(['SINGLE_CHOICE', 'MULTIPLE_CHOICE']);

/** The answer-key fields each type uses; any other one sent with a question is refused. */
const KEY_FIELDS = ['options', 'correctOptionIds', 'correctAnswer', 'acceptedAnswers', 'numericAnswer', 'tolerance'] as const;
const FIELDS_OF: Record<StoredQuestion['type'], ReadonlyArray<(typeof KEY_FIELDS)[number]>> = {
  SINGLE_CHOICE: ['options', 'correctOptionIds'],
  MULTIPLE_CHOICE: ['options', 'correctOptionIds'],
  TRUE_FALSE: ['correctAnswer'],
  SHORT_ANSWER: ['acceptedAnswers'],
  NUMERIC: ['numericAnswer', 'tolerance'],
};

const present = (v: unknown) => v !== undefined && v !== null;

/**
 * An author's questions as stored: every rule of its type checked (400 VALIDATION_ERROR listing
 * each problem with its field), ids kept when they name a question of the stored quiz and assigned
 * for new ones, sorted by `order` (ties: the order sent) and renumbered 1..n.
 */
export function buildQuestions(input: QuestionInput[], existingIds: ReadonlySet<string>, newId: () => string): StoredQuestion[] {
  const problems: Problem[] = [];
  const seen = new Set<string>();
  const built = input.map((q, i): StoredQuestion => {
    const at = (field: string) => `body.questions.${i}.${field}`;
    if (q.id !== undefined) {
      if (!existingIds.has(q.id)) problems.push({ field: at('id'), message: 'not a question of this quiz: omit the id for a new question' });
      else if (seen.has(q.id)) problems.push({ field: at('id'), message: 'the same question id appears twice' });
      seen.add(q.id);
    }
    for (const field of KEY_FIELDS) {
      if (!FIELDS_OF[q.type].includes(field) && present(q[field])) problems.push({ field: at(field), message: `not used by ${q.type} questions` });
    }
    const base = { id: q.id ?? newId(), type: q.type, prompt: q.prompt, points: q.points, explanation: q.explanation || null, order: q.order ?? i };
    switch (q.type) {
      case 'SINGLE_CHOICE':
      case 'MULTIPLE_CHOICE': {
        const options = q.options ?? [];
        if (!present(q.options)) problems.push({ field: at('options'), message: 'required: 2 to 20 options' });
        const optionIds = new Set<string>();
        options.forEach((o, j) => {
          if (optionIds.has(o.id)) problems.push({ field: at(`options.${j}.id`), message: 'option ids must be unique within the question' });
          optionIds.add(o.id);
        });
        const correct = q.correctOptionIds ?? [];
        if (!present(q.correctOptionIds)) problems.push({ field: at('correctOptionIds'), message: 'required' });
        else if (new Set(correct).size !== correct.length) problems.push({ field: at('correctOptionIds'), message: 'an option is named twice' });
        else if (q.type === 'SINGLE_CHOICE' && correct.length !== 1)
          problems.push({ field: at('correctOptionIds'), message: 'a single-choice question has exactly one correct option' });
        correct.forEach((id, j) => {
          if (!optionIds.has(id)) problems.push({ field: at(`correctOptionIds.${j}`), message: 'not an option of this question' });
        });
        return { ...base, options: options.map((o) => ({ id: o.id, text: o.text })), correctOptionIds: [...correct] };
      }
      case 'TRUE_FALSE':
        if (!present(q.correctAnswer)) problems.push({ field: at('correctAnswer'), message: 'required: true or false' });
        return { ...base, correctAnswer: q.correctAnswer ?? false };
      case 'SHORT_ANSWER':
        if (!present(q.acceptedAnswers)) problems.push({ field: at('acceptedAnswers'), message: 'required: 1 to 50 accepted answers' });
        return { ...base, acceptedAnswers: [...(q.acceptedAnswers ?? [])] };
      case 'NUMERIC':
        if (!present(q.numericAnswer)) problems.push({ field: at('numericAnswer'), message: 'required: a number' });
        return { ...base, numericAnswer: q.numericAnswer ?? 0, tolerance: q.tolerance ?? 0 };
    }
  });
  if (problems.length > 0) throw validationError('The quiz is not valid', problems);
  return built
    .map((q, i) => ({ q, i }))
    .sort((a, b) => a.q.order - b.q.order || a.i - b.i)
    .map(({ q }, i) => ({ ...q, order: i + 1 }));
}

export const totalPoints = (questions: StoredQuestion[]) =>
  round(
    questions.reduce((sum, q) => sum + q.points, 0),
    4,
  );

// ── views ──────────────────────────────────────────────────────────────────────

/** A question as course staff see it: everything its type stores, with the answer key. */
export function staffQuestion(q: StoredQuestion): QuestionDto {
  const base = { id: q.id, type: q.type, prompt: q.prompt, points: q.points, explanation: q.explanation ?? null, order: q.order };
  switch (q.type) {
    case 'SINGLE_CHOICE':
    case 'MULTIPLE_CHOICE':
      return { ...base, options: (q.options ?? []).map((o) => ({ id: o.id, text: o.text })), correctOptionIds: [...(q.correctOptionIds ?? [])] };
    case 'TRUE_FALSE':
      return { ...base, correctAnswer: q.correctAnswer ?? false };
    case 'SHORT_ANSWER':
      return { ...base, acceptedAnswers: [...(q.acceptedAnswers ?? [])] };
    case 'NUMERIC':
      return { ...base, numericAnswer: q.numericAnswer ?? 0, tolerance: q.tolerance ?? 0 };
  }
}

/**
 * The questions as a learner sees them, and the only place that view is made: each question is
 * built from an allowlist (id, type, prompt, the options' id and text, points, order), so no
 * correct option, right answer, accepted answer, numeric answer, tolerance or explanation can
 * reach a learner, whatever the stored form gains later. With shuffling on, questions and/or
 * options come in an order derived from `seed` (stable for one learner's attempt), and `order`
 * is the position shown.
 */
export function learnerQuestions(quiz: { questions: StoredQuestion[]; shuffleQuestions: boolean; shuffleOptions: boolean }, seed: string): QuestionDto[] {
  const questions = quiz.shuffleQuestions ? seededShuffle(quiz.questions, `${seed}:questions`) : quiz.questions;
  return questions.map((q, i) => {
    const view: QuestionDto = { id: q.id, type: q.type, prompt: q.prompt, points: q.points, order: i + 1 };
    if (CHOICE.has(q.type)) {
      const options = (q.options ?? []).map((o) => ({ id: o.id, text: o.text }));
      view.options = quiz.shuffleOptions ? seededShuffle(options, `${seed}:options:${q.id}`) : options;
    }
    return view;
  });
}

/** A Fisher–Yates shuffle driven by a PRNG (mulberry32) seeded from sha256(seed): the same seed, the same order. */
export function seededShuffle<T>(items: readonly T[], seed: string): T[] {
  let state = createHash('sha256').update(seed).digest().readUInt32LE(0);
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

// ── answers and grading ────────────────────────────────────────────────────────

/**
 * A learner's answers checked against the quiz (400 VALIDATION_ERROR with each problem): every
 * questionId names a question of the quiz, once; each entry carries only the field of its type
 * (choice: optionIds naming options of the question, at most one for SINGLE_CHOICE;
 * TRUE_FALSE: a boolean value; NUMERIC: a number value; SHORT_ANSWER: text). An entry with no
 * answer field is an unanswered question.
 */
export function checkAnswers(questions: StoredQuestion[], answers: StoredAnswer[]): StoredAnswer[] {
  const byId = new Map(questions.map((q) => [q.id, q]));
  const problems: Problem[] = [];
  const seen = new Set<string>();
  const out = answers.map((a, i): StoredAnswer => {
    const at = (field: string) => `body.answers.${i}.${field}`;
    const q = byId.get(a.questionId);
    if (!q) {
      problems.push({ field: at('questionId'), message: 'not a question of this quiz' });
      return a;
    }
    if (seen.has(q.id)) problems.push({ field: at('questionId'), message: 'the same question is answered twice' });
    seen.add(q.id);
    const wrongField = (field: string, expected: string) => problems.push({ field: at(field), message: `${q.type} questions take ${expected}` });
    if (CHOICE.has(q.type)) {
      if (a.value !== undefined) wrongField('value', 'optionIds');
      if (a.text !== undefined) wrongField('text', 'optionIds');
      const options = new Set((q.options ?? []).map((o) => o.id));
      (a.optionIds ?? []).forEach((id, j) => {
        if (!options.has(id)) problems.push({ field: at(`optionIds.${j}`), message: 'not an option of this question' });
      });
      if (q.type === 'SINGLE_CHOICE' && new Set(a.optionIds).size > 1) problems.push({ field: at('optionIds'), message: 'a single-choice question takes one option' });
      return { questionId: q.id, ...(a.optionIds !== undefined ? { optionIds: [...new Set(a.optionIds)] } : {}) };
    }
    if (a.optionIds !== undefined) wrongField('optionIds', q.type === 'SHORT_ANSWER' ? 'text' : 'value');
    if (q.type === 'SHORT_ANSWER') {
      if (a.value !== undefined) wrongField('value', 'text');
      return { questionId: q.id, ...(a.text !== undefined ? { text: a.text } : {}) };
    }
    if (a.text !== undefined) wrongField('text', 'value');
    const want = q.type === 'TRUE_FALSE' ? 'boolean' : 'number';
    if (a.value !== undefined && typeof a.value !== want) problems.push({ field: at('value'), message: `${q.type} questions take a ${want} value` });
    return { questionId: q.id, ...(a.value !== undefined ? { value: a.value } : {}) };
  });
  if (problems.length > 0) throw validationError('The answers do not fit this quiz', problems);
  return out;
}

/**
 * Short answers compare case- and space-insensitively (issue 11), after Unicode NFC: without any
 * whitespace, lower-cased, so "New York", " new  york " and "NewYork" are one answer.
 */
export const normaliseShortAnswer = (s: string) => s.normalize('NFC').replace(/\s+/gu, '').toLowerCase();

/** Whether one answer is right. No partial credit: choice questions need exactly the set of correct options. */
export function isCorrect(q: StoredQuestion, a: StoredAnswer | undefined): boolean {
  if (!a) return false;
  switch (q.type) {
    case 'SINGLE_CHOICE':
    case 'MULTIPLE_CHOICE': {
      if (!a.optionIds) return false;
      const given = new Set(a.optionIds);
      const right = new Set(q.correctOptionIds ?? []);
      return given.size === right.size && [...right].every((id) => given.has(id));
    }
    case 'TRUE_FALSE':
      return typeof a.value === 'boolean' && a.value === q.correctAnswer;
    case 'SHORT_ANSWER': {
      if (typeof a.text !== 'string') return false;
      const given = normaliseShortAnswer(a.text);
      return given !== '' && (q.acceptedAnswers ?? []).some((x) => normaliseShortAnswer(x) === given);
    }
    case 'NUMERIC': {
      if (typeof a.value !== 'number') return false;
      const target = q.numericAnswer ?? 0;
      // A relative epsilon, so 3.15 is within 0.01 of 3.14 despite binary floating point.
      return Math.abs(a.value - target) <= (q.tolerance ?? 0) + 1e-9 * Math.max(1, Math.abs(target));
    }
  }
}

export interface Grade {
  results: QuestionResult[];
  score: number;
  maxScore: number;
  /** score / maxScore × 100, two decimals. */
  percentage: number;
  passed: boolean;
}

/** Grades checked answers: full points for a right answer, none otherwise; passed at a percentage ≥ passingScore. */
export function grade(questions: StoredQuestion[], answers: StoredAnswer[], passingScore: number): Grade {
  const byQuestion = new Map(answers.map((a) => [a.questionId, a]));
  const results = questions.map((q) => {
    const correct = isCorrect(q, byQuestion.get(q.id));
    return { questionId: q.id, correct, pointsAwarded: correct ? q.points : 0, points: q.points };
  });
  const score = round(
    results.reduce((s, r) => s + r.pointsAwarded, 0),
    4,
  );
  const maxScore = totalPoints(questions);
  const exact = maxScore > 0 ? (score * 100) / maxScore : 0;
  return { results, score, maxScore, percentage: round(exact, 2), passed: exact + 1e-9 >= passingScore };
}

function round(n: number, digits: number) {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
