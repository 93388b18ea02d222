import { useSearchParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useTitle } from '../../components/Layout';
import { ErrorMessage, QueryState } from '../../components/Status';
import { formatDateTime, formatTimestamp } from '../../format';
import type { Course, LiveSession } from '../../types';

const recordingLabel: Record<string, string> = {
  PENDING: 'starting',
  RECORDING: 'recording',
  PROCESSING: 'processing',
  READY: 'ready',
  FAILED: 'failed',
};

/** Live sessions: schedule, start and end, recording start and stop with its status (polled while it changes on its own). */
export function LiveSessions() {
  useTitle('Live sessions');
  const [params] = useSearchParams();
  const courseId = params.get('courseId') ?? undefined;
  const queryClient = useQueryClient();
  const courses = useQuery({ queryKey: ['teach-courses'], queryFn: () => api.get<Course[]>('/api/courses', { perPage: 100 }) });
  const sessions = useQuery({
    queryKey: ['live-sessions', courseId ?? ''],
    queryFn: () => api.get<LiveSession[]>('/api/live-sessions', { courseId, perPage: 100 }),
    // The recorder moves a stopped recording to READY by itself: poll while one is on its way.
    refetchInterval: (q) => (q.state.data?.some((s) => s.recordingStatus === 'PENDING' || s.recordingStatus === 'PROCESSING') ? 2000 : false),
  });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['live-sessions'] });
  const schedule = useMutation({ mutationFn: (body: object) => api.post<LiveSession>('/api/live-sessions', body), onSuccess: refresh });
  const act = useMutation({
    mutationFn: ({ id, action }: { id: string; action: 'start' | 'end' | 'recording/start' | 'recording/stop' }) =>
      api.post(`/api/live-sessions/${encodeURIComponent(id)}/${action}`),
    onSettled: refresh,
  });
  const courseTitle = (id: string) => courses.data?.find((c) => c.id === id)?.title ?? id;

  return (
    <>
      <h1>Live sessions</h1>
      <ErrorMessage error={act.error} />
      <QueryState query={sessions} label="Loading live sessions">
        {(list) =>
          list.length === 0 ? (
            <p>No live sessions yet.</p>
          ) : (
            <ul className="list">
              {list.map((s) => (
                <li key={s.id}>
                  <h2>{s.title}</h2>
                  <p className="small muted">
                    {courseTitle(s.courseId)} · {formatDateTime(s.scheduledAt)} · {s.durationMinutes} minutes
                  </p>
                  <div className="row">
                    <span className={s.status === 'LIVE' ? 'tag ok' : 'tag'}>Session: {s.status.toLowerCase()}</span>
                    {s.recordingStatus ? (
                      <span className={s.recordingStatus === 'FAILED' ? 'tag warn' : 'tag'} role="status">
                        Recording: {recordingLabel[s.recordingStatus]}
                      </span>
                    ) : null}
                    {s.recordingStatus === 'READY' && s.recordingUrl ? (
                      <a href={s.recordingUrl}>Watch the recording{s.recordingDuration ? ` (${formatTimestamp(s.recordingDuration)})` : ''}</a>
                    ) : null}
                  </div>
                  <div className="row" style={{ marginTop: '0.5rem' }}>
                    {s.status === 'SCHEDULED' ? (
                      <button type="button" onClick={() => act.mutate({ id: s.id, action: 'start' })} disabled={act.isPending}>
                        Start the session<span className="visually-hidden"> {s.title}</span>
                      </button>
                    ) : null}
                    {s.status === 'LIVE' ? (
                      <>
                        {s.recordingStatus === 'RECORDING' || s.recordingStatus === 'PENDING' ? (
                          <button type="button" className="secondary" onClick={() => act.mutate({ id: s.id, action: 'recording/stop' })} disabled={act.isPending}>
                            Stop recording
                          </button>
                        ) : (
                          <button type="button" className="secondary" onClick={() => act.mutate({ id: s.id, action: 'recording/start' })} disabled={act.isPending}>
                            Start recording
                          </button>
                        )}
                        <button type="button" className="danger" onClick={() => act.mutate({ id: s.id, action: 'end' })} disabled={act.isPending}>
                          End the session
                        </button>
                      </>
                    ) : null}
                  </div>
                </li>
              ))}
            </ul>
          )
        }
      </QueryState>

      <h2>Schedule a session</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const data = new FormData(form);
          schedule.mutate(
            {
              courseId: data.get('courseId'),
              title: String(data.get('title')).trim(),
              scheduledAt: new Date(String(data.get('scheduledAt'))).toISOString(),
              durationMinutes: Number(data.get('durationMinutes')),
            },
            { onSuccess: () => form.reset() },
          );
        }}
      >
        <label className="field">
          Course
          <select name="courseId" required defaultValue={courseId}>
            {courses.data?.map((c) => (
              <option key={c.id} value={c.id}>
                {c.title}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          Title
          <input name="title" required maxLength={200} />
        </label>
        <div className="row">
          <label className="field">
            Starts
            <input type="datetime-local" name="scheduledAt" required />
          </label>
          <label className="field">
            Minutes
            <input type="number" name="durationMinutes" min={1} max={1440} defaultValue={45} required />
          </label>
        </div>
        <ErrorMessage error={schedule.error ?? courses.error} />
        <button type="submit" disabled={schedule.isPending}>
          Schedule
        </button>
      </form>
    </>
  );
}
