import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api } from '../api';
import { useSessionState } from '../session';
import { ErrorMessage, QueryState } from '../components/Status';
import type { DemoPerson, Role } from '../types';

const GROUPS: Array<{ role: Role; title: string }> = [
  { role: 'STUDENT', title: 'Students' },
  { role: 'PARENT', title: 'Parents' },
  { role: 'TEACHER', title: 'Teachers' },
  { role: 'ADMIN', title: 'Administrators' },
];

/** Only same-app paths are followed after signing in. */
const safeNext = (next: string | null) => (next && next.startsWith('/') && !next.startsWith('//') ? next : '/');

/**
 * Production: the CRM signs people in (its Auth.js cookie is this app's session), so the page
 * sends them to AUTH_SIGNIN_URL. Development: pick one of the CRM simulator's people.
 */
export function SignIn() {
  const { session, config } = useSessionState();
  const [params] = useSearchParams();
  const next = safeNext(params.get('next'));
  useEffect(() => {
    document.title = 'Sign in · Learning';
  }, []);

  useEffect(() => {
    if (!session && !config.devSignIn && config.signInUrl) {
      const target = new URL(config.signInUrl);
      target.searchParams.set('callbackUrl', new URL(next, window.location.origin).toString());
      window.location.assign(target.toString());
    }
  }, [session, config, next]);

  return (
    <main id="main" className="page narrow">
      <h1>Sign in</h1>
      {session ? (
        <p>
          You are signed in as {session.name ?? session.personId}. <a href={next}>Continue</a>
        </p>
      ) : config.devSignIn ? (
        <DevSignIn next={next} />
      ) : config.signInUrl ? (
        <p role="status">
          Taking you to your school’s sign-in page… If nothing happens, <a href={config.signInUrl}>sign in here</a>.
        </p>
      ) : (
        <p>Sign in through your school’s portal, then come back to this page.</p>
      )}
    </main>
  );
}

function DevSignIn({ next }: { next: string }) {
  const people = useQuery({ queryKey: ['dev-people'], queryFn: () => api.get<DemoPerson[]>('/api/dev/people') });
  const [institution, setInstitution] = useState('inst_demo');
  const signIn = useMutation({
    mutationFn: (personId: string) => api.post('/api/dev/sign-in', { personId }),
    // A full load, so every query starts over with the new session.
    onSuccess: () => window.location.assign(next),
  });
  return (
    <>
      <p>Development sign-in: choose one of the CRM simulator’s people. In production the school’s CRM signs people in and this page sends them there.</p>
      <ErrorMessage error={signIn.error} />
      <QueryState query={people} label="Loading people">
        {(all) => {
          const institutions = [...new Map(all.map((p) => [p.institutionId, p.institutionName])).entries()];
          const shown = all.filter((p) => p.institutionId === institution);
          return (
            <>
              <label className="field">
                Institution
                <select value={institution} onChange={(e) => setInstitution(e.target.value)}>
                  {institutions.map(([id, name]) => (
                    <option key={id} value={id}>
                      {name}
                    </option>
                  ))}
                </select>
              </label>
              {GROUPS.map((g) => {
                const members = shown.filter((p) => p.role === g.role);
                if (members.length === 0) return null;
                return (
                  <section key={g.role} aria-labelledby={`group-${g.role}`}>
                    <h2 id={`group-${g.role}`}>{g.title}</h2>
                    <ul className="people">
                      {members.map((p) => (
                        <li key={p.personId}>
                          <button type="button" onClick={() => signIn.mutate(p.personId)} disabled={signIn.isPending} aria-describedby={`detail-${p.personId}`}>
                            {p.name}
                          </button>
                          <span id={`detail-${p.personId}`} className="muted small">
                            {p.personId}
                            {p.detail ? ` · ${p.detail}` : ''}
                          </span>
                        </li>
                      ))}
                    </ul>
                  </section>
                );
              })}
            </>
          );
        }}
      </QueryState>
    </>
  );
}
