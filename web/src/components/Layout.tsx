import { useEffect, useRef } from 'react';
import { Link, NavLink, Outlet, useLocation, useNavigationType } from 'react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../api';
import { isStaff, useSession, useSessionState } from '../session';
import { NotificationBell } from './NotificationBell';
import type { Session } from '../types';

function navFor(s: Session): Array<{ to: string; label: string }> {
  const common = [{ to: '/notifications', label: 'Notifications' }];
  if (s.role === 'PARENT') return [{ to: '/children', label: 'My children' }, ...common];
  if (isStaff(s))
    return [
      { to: '/teach', label: 'Courses' },
      { to: '/teach/live', label: 'Live sessions' },
      { to: '/catalogue', label: 'Catalogue' },
    ];
  return [
    { to: '/my-courses', label: 'My courses' },
    { to: '/catalogue', label: 'Catalogue' },
    { to: '/notes', label: 'Notes' },
    { to: '/bookmarks', label: 'Bookmarks' },
    { to: '/peer-reviews', label: 'Peer reviews' },
    { to: '/certificates', label: 'Certificates' },
  ];
}

const roleLabel: Record<string, string> = { STUDENT: 'Student', TEACHER: 'Teacher', ADMIN: 'Administrator', PARENT: 'Parent' };

/** Page chrome: skip link, header with navigation, bell and who is signed in; focus moves to the page heading on navigation. */
export function Layout() {
  const session = useSession();
  const { config } = useSessionState();
  const location = useLocation();
  const mainRef = useRef<HTMLElement>(null);
  const queryClient = useQueryClient();
  const signOut = useMutation({
    mutationFn: () => api.post('/api/dev/sign-out'),
    onSuccess: () => {
      queryClient.clear();
      window.location.assign('/sign-in');
    },
  });

  // After a client-side navigation, screen readers and keyboards start at the new page's heading
  // (not on the first page, nor after a redirect, where the skip link comes first).
  const navigationType = useNavigationType();
  const first = useRef(true);
  useEffect(() => {
    if (first.current || navigationType === 'REPLACE') {
      first.current = false;
      return;
    }
    const heading = mainRef.current?.querySelector('h1');
    if (heading) {
      heading.setAttribute('tabindex', '-1');
      heading.focus();
    }
  }, [location.pathname, navigationType]);

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="site-header">
        <div className="brand-row">
          <Link to="/" className="brand">
            Learning
          </Link>
          <div className="who">
            <NotificationBell />
            <span className="person">
              {session.name ?? session.personId} <span className="muted">· {roleLabel[session.role]}</span>
            </span>
            {config.devSignIn ? (
              <button type="button" className="link-button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
                Sign out
              </button>
            ) : null}
          </div>
        </div>
        <nav aria-label="Main">
          <ul>
            {navFor(session).map((item) => (
              <li key={item.to}>
                <NavLink to={item.to} end={item.to === '/teach'}>
                  {item.label}
                </NavLink>
              </li>
            ))}
            <li>
              <NavLink to="/settings/notifications">Settings</NavLink>
            </li>
          </ul>
        </nav>
      </header>
      <main id="main" ref={mainRef} className="page">
        <Outlet />
      </main>
    </>
  );
}

/** Sets the document title with the page's name. */
export function useTitle(title: string) {
  useEffect(() => {
    document.title = `${title} · Learning`;
  }, [title]);
}
