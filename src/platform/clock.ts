/** Injectable time, so tests can move it (drip content, caches, digests). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date | string = new Date()) {
    this.current = new Date(start).getTime();
  }
  now() {
    return new Date(this.current);
  }
  set(to: Date | string) {
    this.current = new Date(to).getTime();
  }
  advance(ms: number) {
    this.current += ms;
  }
}
