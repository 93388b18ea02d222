import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/http/errors.js';
import { buildQuestions, checkAnswers, grade, isCorrect, learnerQuestions, normaliseShortAnswer, seededShuffle } from './quizzes.questions.js';
import type { QuestionInput } from './quizzes.schemas.js';
import type { StoredQuestion } from './quizzes.tables.js';

let n = 0;
const ids = () => `q${++n}`;
const q = (over: Partial<QuestionInput> & Pick<QuestionInput, 'type'>): QuestionInput => ({ prompt: 'P', points: 1, ...over });
const problems = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('VALIDATION_ERROR');
    return ((err as AppError).details?.fields as Array<{ field: string }>).map((f) => f.field);
  }
  throw new Error('expected a validation error');
};

const single: StoredQuestion = {
  id: 's',
  type: 'SINGLE_CHOICE',
  prompt: 'P',
  points: 2,
  order: 1,
  options: [
    { id: 'a', text: 'A' },
    { id: 'b', text: 'B' },
  ],
  correctOptionIds: ['b'],
  explanation: 'Because',
};
const multi: StoredQuestion = {
  id: 'm',
  type: 'MULTIPLE_CHOICE',
  prompt: 'P',
  points: 3,
  order: 2,
  options: [
    { id: 'a', text: 'A' },
    { id: 'b', text: 'B' },
    { id: 'c', text: 'C' },
  ],
  correctOptionIds: ['a', 'c'],
};
const tf: StoredQuestion = { id: 't', type: 'TRUE_FALSE', prompt: 'P', points: 1, order: 3, correctAnswer: false };
const short: StoredQuestion = { id: 'h', type: 'SHORT_ANSWER', prompt: 'P', points: 1, order: 4, acceptedAnswers: ['New  York City', 'NYC'] };
const num: StoredQuestion = { id: 'n', type: 'NUMERIC', prompt: 'P', points: 1, order: 5, numericAnswer: 3.14, tolerance: 0.01 };

describe('buildQuestions', () => {
  it('assigns ids to new questions, keeps known ones, sorts by order and renumbers 1..n', () => {
    const built = buildQuestions(
      [
        q({ type: 'TRUE_FALSE', correctAnswer: true, order: 5 }),
        q({ id: 'keep', type: 'NUMERIC', numericAnswer: 2, order: 1 }),
        q({ type: 'SHORT_ANSWER', acceptedAnswers: ['x'], order: 5 }),
      ],
      new Set(['keep']),
      ids,
    );
    expect(built.map((x) => [x.type, x.order])).toEqual([
      ['NUMERIC', 1],
      ['TRUE_FALSE', 2],
      ['SHORT_ANSWER', 3],
    ]);
    expect(built[0]!.id).toBe('keep');
    expect(built[0]!.tolerance).toBe(0);
    expect(new Set(built.map((x) => x.id)).size).toBe(3);
  });

  it('refuses what each type forbids, naming every field', () => {
    expect(
      problems(() =>
        buildQuestions(
          [
            q({
              type: 'SINGLE_CHOICE',
              options: [
                { id: 'a', text: 'A' },
                { id: 'b', text: 'B' },
              ],
              correctOptionIds: ['a', 'b'],
            }),
            q({
              type: 'SINGLE_CHOICE',
              options: [
                { id: 'a', text: 'A' },
                { id: 'b', text: 'B' },
              ],
              correctOptionIds: ['z'],
            }),
            q({
              type: 'MULTIPLE_CHOICE',
              options: [
                { id: 'a', text: 'A' },
                { id: 'a', text: 'B' },
              ],
              correctOptionIds: ['a'],
            }),
            q({ type: 'MULTIPLE_CHOICE', correctOptionIds: ['a'] }),
            q({ type: 'TRUE_FALSE' }),
            q({ type: 'SHORT_ANSWER', acceptedAnswers: ['x'], numericAnswer: 1 }),
            q({ type: 'NUMERIC', tolerance: 1 }),
            q({ id: 'unknown', type: 'TRUE_FALSE', correctAnswer: true }),
          ],
          new Set(),
          ids,
        ),
      ),
    ).toEqual([
      'body.questions.0.correctOptionIds',
      'body.questions.1.correctOptionIds.0',
      'body.questions.2.options.1.id',
      'body.questions.3.options',
      'body.questions.3.correctOptionIds.0',
      'body.questions.4.correctAnswer',
      'body.questions.5.numericAnswer',
      'body.questions.6.numericAnswer',
      'body.questions.7.id',
    ]);
  });

  it('refuses the same kept id twice', () => {
    const tfq = (id: string) => q({ id, type: 'TRUE_FALSE', correctAnswer: true });
    expect(problems(() => buildQuestions([tfq('k'), tfq('k')], new Set(['k']), ids))).toEqual(['body.questions.1.id']);
  });
});

describe('learnerQuestions (the one learner view)', () => {
  const quiz = { questions: [single, multi, tf, short, num], shuffleQuestions: false, shuffleOptions: false };

  it('carries no answer key, accepted answer, numeric answer, tolerance or explanation', () => {
    const text = JSON.stringify(learnerQuestions(quiz, 'seed'));
    for (const key of ['correctOptionIds', 'correctAnswer', 'acceptedAnswers', 'numericAnswer', 'tolerance', 'explanation', '"correct"']) expect(text).not.toContain(key);
    expect(text).not.toContain('NYC');
    expect(learnerQuestions(quiz, 'seed')[0]).toEqual({
      id: 's',
      type: 'SINGLE_CHOICE',
      prompt: 'P',
      points: 2,
      order: 1,
      options: [
        { id: 'a', text: 'A' },
        { id: 'b', text: 'B' },
      ],
    });
  });

  it('shuffles by seed: the same seed the same order, questions renumbered as shown', () => {
    const shuffled = { ...quiz, shuffleQuestions: true, shuffleOptions: true };
    const a = learnerQuestions(shuffled, 'quiz:student:1');
    expect(learnerQuestions(shuffled, 'quiz:student:1')).toEqual(a);
    expect(a.map((x) => x.order)).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(a.map((x) => x.id))).toEqual(new Set(['s', 'm', 't', 'h', 'n']));
    const orders = new Set(
      Array.from({ length: 20 }, (_, i) =>
        learnerQuestions(shuffled, `quiz:student:${i}`)
          .map((x) => x.id)
          .join(),
      ),
    );
    expect(orders.size).toBeGreaterThan(1);
  });

  it('seededShuffle is a permutation', () => {
    const items = Array.from({ length: 50 }, (_, i) => i);
    const out = seededShuffle(items, 'x');
    expect([...out].sort((x, y) => x - y)).toEqual(items);
    expect(out).not.toEqual(items);
  });
});

describe('checkAnswers', () => {
  const questions = [single, multi, tf, short, num];
  it('accepts the field of each type and an entry with none (unanswered)', () => {
    expect(
      checkAnswers(questions, [
        { questionId: 's', optionIds: ['b', 'b'] },
        { questionId: 'm' },
        { questionId: 't', value: true },
        { questionId: 'h', text: 'x' },
        { questionId: 'n', value: 3 },
      ]),
    ).toEqual([{ questionId: 's', optionIds: ['b'] }, { questionId: 'm' }, { questionId: 't', value: true }, { questionId: 'h', text: 'x' }, { questionId: 'n', value: 3 }]);
  });

  it('refuses unknown questions and options, repeats, and fields of another type', () => {
    expect(
      problems(() =>
        checkAnswers(questions, [
          { questionId: 'nope' },
          { questionId: 's', optionIds: ['z'] },
          { questionId: 's' },
          { questionId: 'm', text: 'a' },
          { questionId: 't', value: 1 },
          { questionId: 'n', value: true },
          { questionId: 'h', optionIds: ['a'] },
        ]),
      ),
    ).toEqual([
      'body.answers.0.questionId',
      'body.answers.1.optionIds.0',
      'body.answers.2.questionId',
      'body.answers.3.text',
      'body.answers.4.value',
      'body.answers.5.value',
      'body.answers.6.optionIds',
    ]);
    // A single-choice question takes one option (the same one twice is one).
    expect(problems(() => checkAnswers(questions, [{ questionId: 's', optionIds: ['a', 'b'] }]))).toEqual(['body.answers.0.optionIds']);
    expect(checkAnswers(questions, [{ questionId: 'm', optionIds: ['a', 'b'] }])).toEqual([{ questionId: 'm', optionIds: ['a', 'b'] }]);
  });
});

describe('grading', () => {
  it('single and multiple choice: exactly the set of correct options', () => {
    expect(isCorrect(single, { questionId: 's', optionIds: ['b'] })).toBe(true);
    expect(isCorrect(single, { questionId: 's', optionIds: ['a', 'b'] })).toBe(false);
    expect(isCorrect(multi, { questionId: 'm', optionIds: ['c', 'a'] })).toBe(true);
    expect(isCorrect(multi, { questionId: 'm', optionIds: ['a'] })).toBe(false);
    expect(isCorrect(multi, { questionId: 'm', optionIds: ['a', 'b', 'c'] })).toBe(false);
    expect(isCorrect(multi, { questionId: 'm', optionIds: [] })).toBe(false);
  });

  it('true/false', () => {
    expect(isCorrect(tf, { questionId: 't', value: false })).toBe(true);
    expect(isCorrect(tf, { questionId: 't', value: true })).toBe(false);
    expect(isCorrect(tf, { questionId: 't' })).toBe(false);
  });

  it('short answer: case- and space-insensitive (issue 11)', () => {
    expect(normaliseShortAnswer('  New \t York\n\nCITY ')).toBe('newyorkcity');
    expect(isCorrect(short, { questionId: 'h', text: '  new   york city ' })).toBe(true);
    expect(isCorrect(short, { questionId: 'h', text: 'nyc' })).toBe(true);
    expect(isCorrect(short, { questionId: 'h', text: 'New Yorkcity' })).toBe(true);
    expect(isCorrect(short, { questionId: 'h', text: 'NEWYORKCITY' })).toBe(true);
    expect(isCorrect(short, { questionId: 'h', text: 'New York' })).toBe(false);
    expect(isCorrect(short, { questionId: 'h', text: '   ' })).toBe(false);
  });

  it('numeric: within the tolerance, inclusive, despite floating point', () => {
    expect(isCorrect(num, { questionId: 'n', value: 3.15 })).toBe(true);
    expect(isCorrect(num, { questionId: 'n', value: 3.13 })).toBe(true);
    expect(isCorrect(num, { questionId: 'n', value: 3.1501 })).toBe(false);
    expect(isCorrect({ ...num, tolerance: 0, numericAnswer: 42 }, { questionId: 'n', value: 42 })).toBe(true);
    expect(isCorrect({ ...num, tolerance: 0, numericAnswer: 42 }, { questionId: 'n', value: 42.001 })).toBe(false);
  });

  it('scores points, percentage with two decimals, passed at >= passingScore', () => {
    const g = grade(
      [single, multi, tf],
      [
        { questionId: 's', optionIds: ['b'] },
        { questionId: 't', value: false },
      ],
      50,
    );
    expect(g).toMatchObject({ score: 3, maxScore: 6, percentage: 50, passed: true });
    expect(g.results).toEqual([
      { questionId: 's', correct: true, pointsAwarded: 2, points: 2 },
      { questionId: 'm', correct: false, pointsAwarded: 0, points: 3 },
      { questionId: 't', correct: true, pointsAwarded: 1, points: 1 },
    ]);
    expect(grade([single, multi, tf], [{ questionId: 's', optionIds: ['b'] }], 34).percentage).toBe(33.33);
    expect(grade([single, multi, tf], [{ questionId: 's', optionIds: ['b'] }], 34).passed).toBe(false);
    const tenths = Array.from({ length: 10 }, (_, i): StoredQuestion => ({ ...tf, id: `t${i}`, points: 0.1 }));
    const seven = grade(
      tenths,
      tenths.slice(0, 7).map((x) => ({ questionId: x.id, value: false })),
      70,
    );
    expect(seven).toMatchObject({ score: 0.7, maxScore: 1, percentage: 70, passed: true });
  });
});
