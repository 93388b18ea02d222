import { BrowserRouter, Navigate, Route, Routes, useLocation } from 'react-router';
import { SessionProvider, isStaff, useSessionState } from './session';
import { Layout } from './components/Layout';
import { SignIn } from './pages/SignIn';
import { NotFound } from './pages/NotFound';

/** Pages behind a session: without one, the sign-in page (development) or the CRM's sign-in. */
function RequireSession() {
  const { session } = useSessionState();
  const location = useLocation();
  if (!session) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  return <Layout />;
}

function Home() {
  const { session } = useSessionState();
  if (!session) return <Navigate to="/sign-in" replace />;
  if (session.role === 'PARENT') return <Navigate to="/children" replace />;
  if (isStaff(session)) return <Navigate to="/teach" replace />;
  return <Navigate to="/my-courses" replace />;
}

export function App() {
  return (
    <BrowserRouter>
      <SessionProvider>
        <Routes>
          <Route path="/sign-in" element={<SignIn />} />
          <Route element={<RequireSession />}>
            <Route index element={<Home />} />
            <Route path="*" element={<NotFound />} />
          </Route>
        </Routes>
      </SessionProvider>
    </BrowserRouter>
  );
}
