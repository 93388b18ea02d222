import { createHook } from 'node:async_hooks';

let kept: object | undefined;

/**
 * Keeps one of Node's internal nextTick objects alive for the life of the process, so that
 * `process.nextTick` stays on V8's fast path. Called first thing at start-up (bin/lms.js), before
 * the service has run enough to collect its heap.
 *
 * Why: Node 20 makes each tick object with the literal
 * `{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback, args }`, and V8 records,
 * weakly, the hidden class ("map") of each step of it in the function's feedback. A full garbage
 * collection at a moment when no tick object is alive frees those maps; the next tick makes new
 * ones, and V8 then marks the literal's feedback megamorphic for the rest of the process (a
 * literal's computed keys have no polymorphic state). From then on every tick defines its four
 * properties through the runtime: 4–5 µs more per HTTP request, a fifth of what a `/healthz`
 * answer costs (bench/RESULTS.md, 2026-11-24). The service got there during start-up; bare Fastify,
 * whose heap never needs a full collection under load, never does. One live tick object keeps the
 * maps, and with them the feedback.
 *
 * Returns the kept object (undefined if this Node announces no `TickObject` to async hooks).
 */
export function keepTickObjectMaps(): object | undefined {
  if (kept) return kept;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && !kept) kept = resource;
    },
  });
  // The hook sees the tick object synchronously, inside nextTick; it is off again right after.
  hook.enable();
  try {
    process.nextTick(() => undefined);
  } finally {
    hook.disable();
  }
  return kept;
}
