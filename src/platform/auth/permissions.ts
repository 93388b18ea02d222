import { AppError } from '../http/errors.js';
import type { Session } from './tokens.js';

/** canManageCourses: ADMIN, TEACHER, or the `permissions` claim (DESIGN.md §4). */
export const canManageCourses = (s: Session) => s.role === 'ADMIN' || s.role === 'TEACHER' || s.permissions.includes('canManageCourses');

export const isAdmin = (s: Session) => s.role === 'ADMIN';

/** Owner-only actions accept the owner and ADMIN. */
export const isOwnerOrAdmin = (s: Session, ownerId: string | null | undefined) => s.role === 'ADMIN' || (!!ownerId && ownerId === s.personId);

/** canManageSession on a live session: its host, or ADMIN. */
export const canManageSession = (s: Session, hostId: string | null | undefined) => isOwnerOrAdmin(s, hostId);

export function requireManageCourses(s: Session) {
  if (!canManageCourses(s)) throw new AppError('FORBIDDEN', 'Course authoring requires canManageCourses');
}

export function requireAdmin(s: Session) {
  if (!isAdmin(s)) throw new AppError('FORBIDDEN', 'This action requires an administrator');
}

export function requireOwnerOrAdmin(s: Session, ownerId: string | null | undefined, what = 'resource') {
  if (!isOwnerOrAdmin(s, ownerId)) throw new AppError('FORBIDDEN', `Only the owner of this ${what} or an administrator may change it`);
}
