import { Link, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useTitle } from '../../components/Layout';
import { ErrorMessage, Notice, QueryState } from '../../components/Status';
import { lessonTypeLabel } from '../../format';
import type { CaptionTrack, Lesson } from '../../types';

const CAPTION_LANGUAGES: Array<[string, string]> = [
  ['en', 'English'],
  ['es', 'Spanish'],
  ['fr', 'French'],
  ['de', 'German'],
  ['pt', 'Portuguese'],
  ['ar', 'Arabic'],
  ['hi', 'Hindi'],
  ['zh', 'Chinese'],
  ['sw', 'Swahili'],
  ['ur', 'Urdu'],
];

/** Editing one lesson: its fields, and for a video its caption tracks (WebVTT upload). */
export function LessonEditor() {
  const { lessonId = '' } = useParams();
  const id = encodeURIComponent(lessonId);
  const queryClient = useQueryClient();
  const lesson = useQuery({ queryKey: ['lesson', lessonId], queryFn: () => api.get<Lesson>(`/api/lessons/${id}`) });
  useTitle(lesson.data ? `Edit: ${lesson.data.title}` : 'Lesson');
  const save = useMutation({
    mutationFn: (body: object) => api.patch<Lesson>(`/api/lessons/${id}`, body),
    onSuccess: (l) => {
      queryClient.setQueryData(['lesson', lessonId], l);
      void queryClient.invalidateQueries({ queryKey: ['course-outline', l.courseId] });
    },
  });
  return (
    <QueryState query={lesson} label="Loading the lesson">
      {(l) => (
        <>
          <p className="small">
            <Link to={`/teach/courses/${l.courseId}`}>Back to the course</Link>
          </p>
          <h1>Edit: {l.title}</h1>
          <p className="muted">{lessonTypeLabel[l.type]} lesson</p>
          {l.type === 'ASSIGNMENT' ? (
            <p>
              <Link to={`/teach/assignments/${l.id}`}>Assignment settings, submissions and grading</Link>
            </p>
          ) : null}
          <form
            key={l.updatedAt}
            onSubmit={(e) => {
              e.preventDefault();
              const data = new FormData(e.currentTarget);
              const text = (name: string) => {
                const v = String(data.get(name) ?? '').trim();
                return v === '' ? null : v;
              };
              const num = (name: string) => (text(name) === null ? null : Number(text(name)));
              const unlockAt = text('unlockAt');
              save.mutate({
                title: text('title'),
                content: text('content'),
                ...(l.type === 'VIDEO' ? { videoUrl: text('videoUrl'), durationSeconds: num('durationSeconds') } : {}),
                isRequired: data.get('isRequired') === 'on',
                unlockAfterDays: num('unlockAfterDays'),
                unlockAt: unlockAt ? new Date(unlockAt).toISOString() : null,
              });
            }}
          >
            <label className="field">
              Title
              <input name="title" required maxLength={200} defaultValue={l.title} />
            </label>
            {l.type === 'VIDEO' ? (
              <>
                <label className="field">
                  Video address (https)
                  <input name="videoUrl" type="url" defaultValue={l.videoUrl ?? ''} />
                </label>
                <label className="field">
                  Length in seconds
                  <input name="durationSeconds" type="number" min={0} defaultValue={l.durationSeconds ?? ''} />
                </label>
              </>
            ) : null}
            <label className="field">
              {l.type === 'PDF' ? 'PDF address' : 'Text'}
              <textarea name="content" rows={l.type === 'TEXT' ? 8 : 2} defaultValue={l.content ?? ''} />
            </label>
            <label className="field inline">
              <input type="checkbox" name="isRequired" defaultChecked={l.isRequired} /> Required to complete the course
            </label>
            <fieldset>
              <legend>Release (drip)</legend>
              <label className="field">
                Days after enrolling
                <input name="unlockAfterDays" type="number" min={0} defaultValue={l.unlockAfterDays ?? ''} />
              </label>
              <label className="field">
                Or on a date
                <input name="unlockAt" type="datetime-local" defaultValue={l.unlockAt ? toLocalInput(l.unlockAt) : ''} />
              </label>
            </fieldset>
            <ErrorMessage error={save.error} />
            {save.isSuccess ? <Notice>Lesson saved.</Notice> : null}
            <button type="submit" disabled={save.isPending}>
              Save lesson
            </button>
          </form>
          {l.type === 'VIDEO' ? <Captions lessonId={l.id} /> : null}
        </>
      )}
    </QueryState>
  );
}

/** An ISO time as the value of a datetime-local input (the reader's zone). */
function toLocalInput(iso: string): string {
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

function Captions({ lessonId }: { lessonId: string }) {
  const id = encodeURIComponent(lessonId);
  const key = ['captions', lessonId];
  const queryClient = useQueryClient();
  const tracks = useQuery({ queryKey: key, queryFn: () => api.get<CaptionTrack[]>(`/api/lessons/${id}/captions`) });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: key });
  const upload = useMutation({ mutationFn: (form: FormData) => api.form<CaptionTrack>(`/api/lessons/${id}/captions`, form), onSuccess: refresh });
  const makeDefault = useMutation({
    mutationFn: (captionId: string) => api.patch(`/api/lessons/${id}/captions/${encodeURIComponent(captionId)}`, { isDefault: true }),
    onSuccess: refresh,
  });
  const remove = useMutation({ mutationFn: (captionId: string) => api.delete(`/api/lessons/${id}/captions/${encodeURIComponent(captionId)}`), onSuccess: refresh });
  return (
    <section aria-labelledby="captions-heading">
      <h2 id="captions-heading">Captions</h2>
      <QueryState query={tracks} label="Loading captions">
        {(list) =>
          list.length === 0 ? (
            <p>No caption tracks yet.</p>
          ) : (
            <ul className="list">
              {list.map((t) => (
                <li key={t.id} className="row">
                  <span>
                    {t.label} ({t.language})
                  </span>
                  {t.isDefault ? (
                    <span className="tag ok">default</span>
                  ) : (
                    <button type="button" className="secondary" onClick={() => makeDefault.mutate(t.id)}>
                      Make default<span className="visually-hidden"> {t.label}</span>
                    </button>
                  )}
                  <a href={t.vttUrl}>WebVTT file</a>
                  <button type="button" className="danger" onClick={() => remove.mutate(t.id)}>
                    Delete<span className="visually-hidden"> {t.label}</span>
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </QueryState>
      <ErrorMessage error={makeDefault.error ?? remove.error} />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const data = new FormData(form);
          // The API reads isDefault as the text "true" or "false"; fields before the file.
          const body = new FormData();
          body.set('language', String(data.get('language')));
          body.set('label', String(data.get('label')));
          body.set('isDefault', data.get('isDefault') === 'on' ? 'true' : 'false');
          body.set('file', data.get('file') as File);
          upload.mutate(body, { onSuccess: () => form.reset() });
        }}
      >
        <h3>Upload a caption track</h3>
        <label className="field">
          WebVTT file (.vtt)
          <input type="file" name="file" accept=".vtt,text/vtt" required />
        </label>
        <label className="field">
          Language
          <select name="language" defaultValue="en">
            {CAPTION_LANGUAGES.map(([code, name]) => (
              <option key={code} value={code}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          Label shown in the player
          <input name="label" required maxLength={100} />
        </label>
        <label className="field inline">
          <input type="checkbox" name="isDefault" /> Shown by default
        </label>
        <ErrorMessage error={upload.error} />
        {upload.isSuccess ? <Notice>Caption track uploaded.</Notice> : null}
        <button type="submit" disabled={upload.isPending}>
          Upload captions
        </button>
      </form>
    </section>
  );
}
