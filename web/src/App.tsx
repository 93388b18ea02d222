import { BrowserRouter, Navigate, Route, Routes, useLocation } from 'react-router';
import { SessionProvider, isStaff, useSessionState } from './session';
import { Layout } from './components/Layout';
import { SignIn } from './pages/SignIn';
import { NotFound } from './pages/NotFound';
import { Catalogue } from './pages/learner/Catalogue';
import { MyCourses } from './pages/learner/MyCourses';
import { CourseOutline } from './pages/learner/CourseOutline';
import { LessonPlayer } from './pages/learner/LessonPlayer';
import { MyBookmarks, MyNotes } from './pages/learner/MyNotes';
import { PeerReviewForm, PeerReviewQueue } from './pages/learner/PeerReviews';
import { Certificates } from './pages/learner/Certificates';
import { ChildOverviewPage, Children } from './pages/parent/Children';
import { TeachCourses } from './pages/teacher/TeachCourses';
import { CourseEditor } from './pages/teacher/CourseEditor';
import { LessonEditor } from './pages/teacher/LessonEditor';
import { AssignmentGrading } from './pages/teacher/AssignmentGrading';
import { LiveSessions } from './pages/teacher/LiveSessions';
import { Notifications } from './pages/Notifications';
import { NotificationSettings } from './pages/NotificationSettings';

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
            <Route path="catalogue" element={<Catalogue />} />
            <Route path="my-courses" element={<MyCourses />} />
            <Route path="courses/:courseId" element={<CourseOutline />} />
            <Route path="courses/:courseId/lessons/:lessonId" element={<LessonPlayer />} />
            <Route path="notes" element={<MyNotes />} />
            <Route path="bookmarks" element={<MyBookmarks />} />
            <Route path="peer-reviews" element={<PeerReviewQueue />} />
            <Route path="peer-reviews/:reviewId" element={<PeerReviewForm />} />
            <Route path="certificates" element={<Certificates />} />
            <Route path="children" element={<Children />} />
            <Route path="children/:childId" element={<ChildOverviewPage />} />
            <Route path="teach" element={<TeachCourses />} />
            <Route path="teach/courses/:courseId" element={<CourseEditor />} />
            <Route path="teach/lessons/:lessonId" element={<LessonEditor />} />
            <Route path="teach/assignments/:lessonId" element={<AssignmentGrading />} />
            <Route path="teach/live" element={<LiveSessions />} />
            <Route path="notifications" element={<Notifications />} />
            <Route path="settings/notifications" element={<NotificationSettings />} />
            <Route path="*" element={<NotFound />} />
          </Route>
        </Routes>
      </SessionProvider>
    </BrowserRouter>
  );
}
