import { useState } from 'react';
import { Link } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api';
import { useTitle } from '../../components/Layout';
import { QueryState } from '../../components/Status';
import { formatDateTime, formatTimestamp } from '../../format';
import type { MyBookmark, MyNote } from '../../types';

function SearchForm({ label, value, onSearch }: { label: string; value: string; onSearch: (q: string) => void }) {
  return (
    <form
      role="search"
      className="row"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch(String(new FormData(e.currentTarget).get('q') ?? '').trim());
      }}
    >
      <label className="field inline">
        {label}
        <input type="search" name="q" defaultValue={value} />
      </label>
      <button type="submit">Search</button>
      {value ? (
        <button type="button" className="secondary" onClick={() => onSearch('')}>
          Clear
        </button>
      ) : null}
    </form>
  );
}

const lessonLink = (courseId: string, lessonId: string, t: number | null) => `/courses/${courseId}/lessons/${lessonId}${t !== null ? `?t=${t}` : ''}`;

export function MyNotes() {
  useTitle('My notes');
  const [search, setSearch] = useState('');
  const notes = useQuery({ queryKey: ['my-notes', search], queryFn: () => api.get<MyNote[]>('/api/me/notes', { search, perPage: 100 }) });
  return (
    <>
      <h1>My notes</h1>
      <SearchForm label="Search notes" value={search} onSearch={setSearch} />
      <QueryState query={notes} label="Loading notes">
        {(list) =>
          list.length === 0 ? (
            <p>{search ? `No notes match “${search}”.` : 'You have no notes yet: add them beside a lesson’s video.'}</p>
          ) : (
            <ul className="list" aria-label={search ? `Notes matching ${search}` : 'Notes'}>
              {list.map((n) => (
                <li key={n.id}>
                  <div className="prose">{n.content}</div>
                  <div className="row small muted">
                    <Link to={lessonLink(n.courseId, n.lessonId, n.timestampSeconds)}>
                      {n.courseTitle} › {n.lessonTitle}
                      {n.timestampSeconds !== null ? ` at ${formatTimestamp(n.timestampSeconds)}` : ''}
                    </Link>
                    <span>{formatDateTime(n.updatedAt)}</span>
                  </div>
                </li>
              ))}
            </ul>
          )
        }
      </QueryState>
    </>
  );
}

export function MyBookmarks() {
  useTitle('My bookmarks');
  const [search, setSearch] = useState('');
  const bookmarks = useQuery({ queryKey: ['my-bookmarks', search], queryFn: () => api.get<MyBookmark[]>('/api/me/bookmarks', { search, perPage: 100 }) });
  return (
    <>
      <h1>My bookmarks</h1>
      <SearchForm label="Search bookmarks" value={search} onSearch={setSearch} />
      <QueryState query={bookmarks} label="Loading bookmarks">
        {(list) =>
          list.length === 0 ? (
            <p>{search ? `No bookmarks match “${search}”.` : 'You have no bookmarks yet.'}</p>
          ) : (
            <ul className="list">
              {list.map((b) => (
                <li key={b.id}>
                  <Link to={lessonLink(b.courseId, b.lessonId, b.timestampSeconds)}>
                    {b.courseTitle} › {b.lessonTitle} at {b.timestampLabel}
                  </Link>
                  {b.label ? <span> · {b.label}</span> : null}
                </li>
              ))}
            </ul>
          )
        }
      </QueryState>
    </>
  );
}
