import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { lazyRequestLogger } from './logging.js';

/** A pino logger at `level` writing JSON lines into `lines`, with `child` spied on. */
function logger(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const parent = pino({ level, base: { app: 'lms' } }, stream);
  const child = vi.spyOn(parent, 'child');
  return { parent: parent as unknown as FastifyBaseLogger, lines, child };
}

describe('lazyRequestLogger', () => {
  it('makes no pino child for calls at levels the app logger has off, and writes nothing', () => {
    const { parent, lines, child } = logger('warn');
    const log = lazyRequestLogger(parent, { reqId: 'r-1' }, {});
    log.info({ a: 1 }, 'not written');
    log.debug('nor this');
    log.trace('nor this');
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });

  it('writes enabled levels with the request id and the app bindings, through one child', () => {
    const { parent, lines, child } = logger('warn');
    const log = lazyRequestLogger(parent, { reqId: 'r-2' }, {});
    log.warn({ code: 'X' }, 'first');
    log.error('second');
    log.info('still off');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, app: 'lms', reqId: 'r-2', code: 'X', msg: 'first' }),
      expect.objectContaining({ level: 50, app: 'lms', reqId: 'r-2', msg: 'second' }),
    ]);
  });

  it('answers bindings() as a pino child would, without making the child', () => {
    const { parent, child } = logger('info');
    const log = lazyRequestLogger(parent, { reqId: 'r-3' }, {}) as FastifyBaseLogger & { bindings(): Record<string, unknown> };
    expect(log.bindings()).toEqual({ app: 'lms', reqId: 'r-3' });
    expect(log.level).toBe('info');
    expect(child).not.toHaveBeenCalled();
  });

  it('gives child loggers of its own the request id too', () => {
    const { parent, lines } = logger('info');
    lazyRequestLogger(parent, { reqId: 'r-4' }, {}).child({ part: 'upload' }).info('nested');
    expect(lines).toEqual([expect.objectContaining({ reqId: 'r-4', part: 'upload', msg: 'nested' })]);
  });

  it('makes the pino child at once when the route sets its own level', () => {
    const { parent, lines, child } = logger('warn');
    const log = lazyRequestLogger(parent, { reqId: 'r-5' }, { level: 'debug' });
    expect(child).toHaveBeenCalledTimes(1);
    log.debug('route-level debug');
    expect(lines).toEqual([expect.objectContaining({ level: 20, reqId: 'r-5', msg: 'route-level debug' })]);
  });
});
