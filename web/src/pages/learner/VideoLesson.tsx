import { useEffect, useRef, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { ErrorMessage, QueryState } from '../../components/Status';
import { formatDateTime, formatTimestamp } from '../../format';
import type { Bookmark, CaptionTrack, Lesson, Note } from '../../types';

/**
 * The video with the lesson's caption tracks as <track> elements (the default one shown), and
 * beside it the learner's notes, stamped with the current time and clickable to seek, and
 * bookmarks on a timeline under the video.
 */
export function VideoLesson({ lesson, startAt, canAnnotate }: { lesson: Lesson; startAt: number; canAnnotate: boolean }) {
  const videoRef = useRef<HTMLVideoElement>(null);
  const [duration, setDuration] = useState<number>(lesson.durationSeconds ?? 0);
  const captions = useQuery({ queryKey: ['captions', lesson.id], queryFn: () => api.get<CaptionTrack[]>(`/api/lessons/${encodeURIComponent(lesson.id)}/captions`) });

  const seek = (seconds: number) => {
    const video = videoRef.current;
    if (!video) return;
    video.currentTime = seconds;
    video.focus();
  };
  const now = () => Math.floor(videoRef.current?.currentTime ?? 0);

  // Start where the learner left off, or at ?t= (from My notes / My bookmarks).
  useEffect(() => {
    const video = videoRef.current;
    if (!video || !startAt) return;
    const go = () => {
      video.currentTime = startAt;
    };
    if (video.readyState >= 1) go();
    else video.addEventListener('loadedmetadata', go, { once: true });
    return () => video.removeEventListener('loadedmetadata', go);
  }, [startAt]);

  return (
    <div className="player">
      <div>
        {lesson.videoUrl ? (
          <QueryState query={captions} label="Loading captions">
            {(tracks) => (
              <video
                ref={videoRef}
                controls
                preload="metadata"
                src={lesson.videoUrl ?? undefined}
                onLoadedMetadata={(e) => setDuration(e.currentTarget.duration || duration)}
                data-testid="lesson-video"
              >
                {tracks.map((t) => (
                  <track key={t.id} kind="captions" src={t.vttUrl} srcLang={t.language} label={t.label} default={t.isDefault} />
                ))}
                Your browser cannot play this video. <a href={lesson.videoUrl ?? undefined}>Download it</a>.
              </video>
            )}
          </QueryState>
        ) : (
          <p>This lesson has no video yet.</p>
        )}
        {canAnnotate ? <Bookmarks lessonId={lesson.id} duration={duration} now={now} seek={seek} /> : null}
      </div>
      {canAnnotate ? <NotesPanel lessonId={lesson.id} now={now} seek={seek} /> : null}
    </div>
  );
}

function NotesPanel({ lessonId, now, seek }: { lessonId: string; now: () => number; seek: (s: number) => void }) {
  const key = ['notes', lessonId];
  const notes = useQuery({ queryKey: key, queryFn: () => api.get<Note[]>(`/api/lessons/${encodeURIComponent(lessonId)}/notes`, { perPage: 100 }) });
  const queryClient = useQueryClient();
  const add = useMutation({
    mutationFn: (body: { content: string; timestampSeconds: number | null }) => api.post<Note>(`/api/lessons/${encodeURIComponent(lessonId)}/notes`, body),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: key });
      void queryClient.invalidateQueries({ queryKey: ['my-notes'] });
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.delete(`/api/lessons/${encodeURIComponent(lessonId)}/notes/${encodeURIComponent(id)}`),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: key }),
  });
  return (
    <aside className="side-panel" aria-labelledby="notes-heading">
      <h2 id="notes-heading">Notes</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const data = new FormData(form);
          add.mutate(
            { content: String(data.get('content')).trim(), timestampSeconds: data.get('stamp') ? now() : null },
            {
              onSuccess: () => form.reset(),
            },
          );
        }}
      >
        <label className="field">
          New note
          <textarea name="content" required maxLength={10000} rows={3} />
        </label>
        <label className="field inline">
          <input type="checkbox" name="stamp" defaultChecked /> At the video’s current time
        </label>
        <ErrorMessage error={add.error ?? remove.error} />
        <button type="submit" disabled={add.isPending}>
          Add note
        </button>
      </form>
      <QueryState query={notes} label="Loading notes">
        {(list) =>
          list.length === 0 ? (
            <p className="muted">No notes on this lesson yet.</p>
          ) : (
            <ul className="list" aria-label="Your notes on this lesson">
              {list.map((n) => (
                <li key={n.id}>
                  {n.timestampSeconds !== null ? (
                    <button type="button" className="secondary timestamp" onClick={() => seek(n.timestampSeconds!)} aria-label={`Play from ${formatTimestamp(n.timestampSeconds)}`}>
                      {formatTimestamp(n.timestampSeconds)}
                    </button>
                  ) : null}{' '}
                  <span className="prose">{n.content}</span>
                  <div className="row small muted">
                    <span>{formatDateTime(n.createdAt)}</span>
                    <button type="button" className="link-button" onClick={() => remove.mutate(n.id)}>
                      Delete<span className="visually-hidden"> note {n.content.slice(0, 30)}</span>
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          )
        }
      </QueryState>
    </aside>
  );
}

function Bookmarks({ lessonId, duration, now, seek }: { lessonId: string; duration: number; now: () => number; seek: (s: number) => void }) {
  const key = ['bookmarks', lessonId];
  const bookmarks = useQuery({ queryKey: key, queryFn: () => api.get<Bookmark[]>(`/api/lessons/${encodeURIComponent(lessonId)}/bookmarks`) });
  const queryClient = useQueryClient();
  const add = useMutation({
    mutationFn: (body: { timestampSeconds: number; label: string | null }) => api.post<Bookmark>(`/api/lessons/${encodeURIComponent(lessonId)}/bookmarks`, body),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: key });
      void queryClient.invalidateQueries({ queryKey: ['my-bookmarks'] });
    },
  });
  return (
    <section aria-labelledby="bookmarks-heading">
      <h2 id="bookmarks-heading">Bookmarks</h2>
      <QueryState query={bookmarks} label="Loading bookmarks">
        {(list) => (
          <>
            {duration > 0 && list.length > 0 ? (
              <div className="timeline" aria-hidden="true">
                {list.map((b) => (
                  <span key={b.id} className="timeline-mark" style={{ left: `${Math.min(100, (b.timestampSeconds / duration) * 100)}%` }} />
                ))}
              </div>
            ) : null}
            {list.length === 0 ? (
              <p className="muted">No bookmarks yet.</p>
            ) : (
              <ul className="row list-inline" aria-label="Bookmarks on the timeline">
                {list.map((b) => (
                  <li key={b.id}>
                    <button type="button" className="secondary" onClick={() => seek(b.timestampSeconds)}>
                      <span className="timestamp">{formatTimestamp(b.timestampSeconds)}</span>
                      {b.label ? ` ${b.label}` : ''}
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </QueryState>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const label = String(new FormData(form).get('label') ?? '').trim();
          add.mutate({ timestampSeconds: now(), label: label || null }, { onSuccess: () => form.reset() });
        }}
      >
        <label className="field inline">
          Bookmark label (optional)
          <input name="label" maxLength={200} />
        </label>
        <button type="submit" disabled={add.isPending}>
          Bookmark this moment
        </button>
      </form>
      <ErrorMessage error={add.error} />
    </section>
  );
}
