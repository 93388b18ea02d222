import { useState } from 'react';
import { Link } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api';
import { useTitle } from '../components/Layout';
import { ErrorMessage, QueryState } from '../components/Status';
import { formatDateTime } from '../format';
import type { AppNotification } from '../types';

/** An action URL of the app's own pages becomes a link inside the app; anything else is not followed. */
function appPath(actionUrl: string | null): string | null {
  if (!actionUrl) return null;
  try {
    const url = new URL(actionUrl, window.location.origin);
    return url.origin === window.location.origin ? url.pathname + url.search : null;
  } catch {
    return null;
  }
}

export function Notifications() {
  useTitle('Notifications');
  const [unreadOnly, setUnreadOnly] = useState(false);
  const queryClient = useQueryClient();
  const list = useQuery({
    queryKey: ['notifications', 'list', unreadOnly],
    queryFn: () =>
      api.get<{ notifications: AppNotification[]; total: number; unreadCount: number }>('/api/notifications', { unreadOnly: unreadOnly ? 'true' : undefined, limit: 50 }),
  });
  const markRead = useMutation({
    mutationFn: (body: { ids: string[] } | { all: true }) => api.patch<{ updated: number }>('/api/notifications/read', body),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['notifications'] }),
  });
  return (
    <>
      <h1>Notifications</h1>
      <div className="row">
        <label className="field inline">
          <input type="checkbox" checked={unreadOnly} onChange={(e) => setUnreadOnly(e.target.checked)} /> Unread only
        </label>
        <button type="button" className="secondary" onClick={() => markRead.mutate({ all: true })} disabled={markRead.isPending || list.data?.unreadCount === 0}>
          Mark all as read
        </button>
        <Link to="/settings/notifications">Notification settings</Link>
      </div>
      <ErrorMessage error={markRead.error} />
      <QueryState query={list} label="Loading notifications">
        {(d) =>
          d.notifications.length === 0 ? (
            <p>{unreadOnly ? 'No unread notifications.' : 'No notifications yet.'}</p>
          ) : (
            <>
              <p className="muted">
                {d.unreadCount} unread of {d.total}
              </p>
              <ul className="list" aria-label="Notifications">
                {d.notifications.map((n) => {
                  const path = appPath(n.actionUrl);
                  return (
                    <li key={n.id} className={n.isRead ? undefined : 'unread'}>
                      <div className="row">
                        {n.isRead ? null : <span className="tag warn">New</span>}
                        <span>{path ? <Link to={path}>{n.title}</Link> : n.title}</span>
                      </div>
                      <p style={{ fontWeight: 'normal', margin: '0.25rem 0' }}>{n.message}</p>
                      <div className="row small muted" style={{ fontWeight: 'normal' }}>
                        <span>{formatDateTime(n.createdAt)}</span>
                        {n.isRead ? null : (
                          <button type="button" className="link-button" onClick={() => markRead.mutate({ ids: [n.id] })}>
                            Mark as read<span className="visually-hidden">: {n.title}</span>
                          </button>
                        )}
                      </div>
                    </li>
                  );
                })}
              </ul>
            </>
          )
        }
      </QueryState>
    </>
  );
}
