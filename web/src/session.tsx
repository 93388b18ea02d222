import { createContext, useContext, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from './api';
import type { Session, WebConfig } from './types';
import { ErrorMessage, Loading } from './components/Status';

interface SessionState {
  session: Session | null;
  config: WebConfig;
}

const SessionContext = createContext<SessionState | null>(null);

/**
 * Who is signed in (GET /api/auth/session: the session cookie the CRM's Auth.js sets, or the
 * development sign-in's) and the app's configuration, loaded once before any page renders.
 */
export function SessionProvider({ children }: { children: ReactNode }) {
  const config = useQuery({ queryKey: ['web-config'], queryFn: () => api.get<WebConfig>('/api/web/config'), staleTime: Infinity });
  const session = useQuery({ queryKey: ['session'], queryFn: () => api.get<Session | null>('/api/auth/session'), staleTime: 5 * 60_000 });
  if (config.error || session.error) {
    return (
      <main id="main" className="page">
        <h1>Learning</h1>
        <ErrorMessage error={config.error ?? session.error} onRetry={() => void Promise.all([config.refetch(), session.refetch()])} />
      </main>
    );
  }
  if (!config.data || session.data === undefined) return <Loading label="Starting" />;
  return <SessionContext.Provider value={{ session: session.data, config: config.data }}>{children}</SessionContext.Provider>;
}

export function useSessionState(): SessionState {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSessionState outside SessionProvider');
  return s;
}

/** The signed-in person (pages under <RequireSession> only). */
export function useSession(): Session {
  const { session } = useSessionState();
  if (!session) throw new Error('useSession without a session');
  return session;
}

export const isStaff = (s: Session) => s.role === 'TEACHER' || s.role === 'ADMIN' || s.permissions.includes('canManageCourses');
