import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api';
import { useTitle } from '../components/Layout';
import { ErrorMessage, Notice, QueryState } from '../components/Status';
import { useSessionState } from '../session';
import type { Frequency, Preferences, Weekday } from '../types';

const FREQUENCIES: Array<[Frequency, string]> = [
  ['IMMEDIATE', 'Right away'],
  ['DAILY_DIGEST', 'Daily digest'],
  ['WEEKLY_DIGEST', 'Weekly digest'],
  ['OFF', 'Off'],
];
const WEEKDAYS: Weekday[] = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];
const CHANNELS = [
  { field: 'inAppEnabled', channel: 'IN_APP', label: 'In the app' },
  { field: 'emailEnabled', channel: 'email', label: 'E-mail' },
  { field: 'pushEnabled', channel: 'push', label: 'Browser and phone' },
] as const;

const title = (s: string) => s.charAt(0) + s.slice(1).toLowerCase().replace(/_/g, ' ');

/** Notification preferences (channels and frequency per kind), digest times, and browser push. */
export function NotificationSettings() {
  useTitle('Notification settings');
  const key = ['notification-preferences'];
  const queryClient = useQueryClient();
  const prefs = useQuery({ queryKey: key, queryFn: () => api.get<Preferences>('/api/notifications/preferences') });
  const update = useMutation({
    mutationFn: (body: Record<string, unknown>) => api.patch('/api/notifications/preferences', body),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: key }),
  });
  const digest = useMutation({
    mutationFn: (body: object) => api.patch('/api/notifications/preferences/digest-times', body),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: key }),
  });
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];

  return (
    <>
      <h1>Notification settings</h1>
      <QueryState query={prefs} label="Loading your settings">
        {(p) => (
          <>
            <ErrorMessage error={update.error} />
            {update.isSuccess ? <Notice>Saved.</Notice> : null}
            {p.categories.map((cat) => (
              <section key={cat.category} aria-labelledby={`cat-${cat.category}`}>
                <h2 id={`cat-${cat.category}`}>{title(cat.category)}</h2>
                {cat.definitions
                  .filter((d) => d.parentKey === null)
                  .map((d) => {
                    const current = p.preferences[d.key] ?? {
                      inAppEnabled: d.defaultChannels.includes('IN_APP'),
                      emailEnabled: d.defaultChannels.includes('email'),
                      pushEnabled: d.defaultChannels.includes('push'),
                      frequency: 'IMMEDIATE' as Frequency,
                    };
                    return (
                      <fieldset key={d.key}>
                        <legend>{d.label}</legend>
                        <p className="small muted">{d.description}</p>
                        <div className="row">
                          {CHANNELS.map((c) => (
                            <label key={c.field} className="field inline">
                              <input
                                type="checkbox"
                                checked={current[c.field]}
                                disabled={update.isPending || (!d.canDisable && current[c.field])}
                                onChange={(e) => update.mutate({ key: d.key, [c.field]: e.target.checked })}
                              />{' '}
                              {c.label}
                            </label>
                          ))}
                          <label className="field inline">
                            How often
                            <select
                              value={current.frequency}
                              disabled={update.isPending || !d.canChangeFrequency}
                              onChange={(e) => update.mutate({ key: d.key, frequency: e.target.value })}
                            >
                              {FREQUENCIES.filter(([f]) => d.canDisable || f !== 'OFF').map(([f, label]) => (
                                <option key={f} value={f}>
                                  {label}
                                </option>
                              ))}
                            </select>
                          </label>
                        </div>
                      </fieldset>
                    );
                  })}
              </section>
            ))}

            <section aria-labelledby="digest-heading">
              <h2 id="digest-heading">Digest times</h2>
              <form
                key={JSON.stringify(p.digestTimes)}
                onSubmit={(e) => {
                  e.preventDefault();
                  const data = new FormData(e.currentTarget);
                  const zone = String(data.get('timezoneOverride') ?? '');
                  digest.mutate({ dailyTime: data.get('dailyTime'), weeklyDay: data.get('weeklyDay'), weeklyTime: data.get('weeklyTime'), timezoneOverride: zone || null });
                }}
              >
                <div className="row">
                  <label className="field">
                    Daily digest at
                    <input type="time" name="dailyTime" required defaultValue={p.digestTimes.dailyTime} />
                  </label>
                  <label className="field">
                    Weekly digest on
                    <select name="weeklyDay" defaultValue={p.digestTimes.weeklyDay}>
                      {WEEKDAYS.map((d) => (
                        <option key={d} value={d}>
                          {title(d)}
                        </option>
                      ))}
                    </select>
                  </label>
                  <label className="field">
                    at
                    <input type="time" name="weeklyTime" required defaultValue={p.digestTimes.weeklyTime} />
                  </label>
                  <label className="field">
                    Time zone
                    <select name="timezoneOverride" defaultValue={p.digestTimes.timezoneOverride ?? ''}>
                      <option value="">The school’s ({p.digestTimes.timezone})</option>
                      {zones.map((z) => (
                        <option key={z} value={z}>
                          {z}
                        </option>
                      ))}
                    </select>
                  </label>
                </div>
                <ErrorMessage error={digest.error} />
                {digest.isSuccess ? <Notice>Digest times saved.</Notice> : null}
                <button type="submit" disabled={digest.isPending}>
                  Save digest times
                </button>
              </form>
            </section>
            <BrowserPush registered={p.hasPushToken} />
          </>
        )}
      </QueryState>
    </>
  );
}

/** The VAPID public key as the bytes PushManager.subscribe wants. */
function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/');
  const raw = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

function BrowserPush({ registered }: { registered: boolean }) {
  const { config } = useSessionState();
  const queryClient = useQueryClient();
  const [state, setState] = useState<string | null>(null);
  const supported = 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
  const subscribe = useMutation({
    mutationFn: async () => {
      if (!config.vapidPublicKey) throw new Error('Browser push is not configured on this server.');
      const permission = await Notification.requestPermission();
      if (permission !== 'granted') throw new Error('Notifications are blocked for this site in your browser settings.');
      const registration = await navigator.serviceWorker.register('/sw.js');
      await navigator.serviceWorker.ready;
      const subscription =
        (await registration.pushManager.getSubscription()) ??
        (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(config.vapidPublicKey) }));
      await api.post('/api/notifications/push-token', { token: JSON.stringify(subscription.toJSON()), platform: 'web' });
    },
    onSuccess: () => {
      setState('This browser will now show your notifications.');
      void queryClient.invalidateQueries({ queryKey: ['notification-preferences'] });
    },
  });
  return (
    <section aria-labelledby="push-heading">
      <h2 id="push-heading">Browser notifications</h2>
      {!config.vapidPublicKey ? (
        <p>Browser notifications are not configured on this server.</p>
      ) : !supported ? (
        <p>This browser cannot show push notifications.</p>
      ) : (
        <>
          <p>{registered ? 'A device of yours receives push notifications.' : 'No device of yours receives push notifications yet.'}</p>
          <ErrorMessage error={subscribe.error} />
          {state ? <Notice>{state}</Notice> : null}
          <button type="button" onClick={() => subscribe.mutate()} disabled={subscribe.isPending}>
            Send notifications to this browser
          </button>
        </>
      )}
    </section>
  );
}
