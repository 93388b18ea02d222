// Service worker of the web app: shows the push messages the service sends ({title, body, url})
// and opens the notification's page when it is clicked.
self.addEventListener('push', (event) => {
  let payload = {};
  try {
    payload = event.data ? event.data.json() : {};
  } catch {
    payload = { body: event.data ? event.data.text() : '' };
  }
  const title = payload.title || 'New notification';
  event.waitUntil(self.registration.showNotification(title, { body: payload.body || '', data: { url: payload.url || '/notifications' }, icon: '/favicon.svg' }));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = new URL(event.notification.data?.url || '/notifications', self.location.origin);
  // Only pages of this app are opened.
  const target = url.origin === self.location.origin ? url.href : `${self.location.origin}/notifications`;
  event.waitUntil(self.clients.openWindow(target));
});
