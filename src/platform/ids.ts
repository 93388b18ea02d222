import { v7 } from 'uuid';

/** Time-ordered ids (UUIDv7) so primary-key indexes stay compact (DESIGN.md §4). */
export const newId = (): string => v7();
