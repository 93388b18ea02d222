import { Link } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api';

/** Spec part 8: the unread count is polled every 30 s; TanStack Query pauses the interval while the tab is hidden and refetches when it shows again. */
export const UNREAD_POLL_MS = 30_000;

export function NotificationBell() {
  const unread = useQuery({
    queryKey: ['notifications', 'unread-count'],
    queryFn: () => api.get<{ count: number }>('/api/notifications/unread-count'),
    refetchInterval: UNREAD_POLL_MS,
    refetchIntervalInBackground: false,
    refetchOnWindowFocus: true,
  });
  const count = unread.data?.count ?? 0;
  const label = unread.error ? 'Notifications (unread count unavailable)' : `Notifications, ${count} unread`;
  return (
    <Link to="/notifications" className="bell" aria-label={label} title={unread.error instanceof Error ? unread.error.message : label} data-testid="bell">
      <svg aria-hidden="true" viewBox="0 0 24 24" width="22" height="22">
        <path d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3a1.5 1.5 0 0 0-3 0v1.16A7 7 0 0 0 5 11v5l-2 2v1h18v-1Z" fill="currentColor" />
      </svg>
      {count > 0 ? (
        <span className="badge" aria-hidden="true" data-testid="bell-count">
          {count > 99 ? '99+' : count}
        </span>
      ) : null}
    </Link>
  );
}
