// Service worker of the web app: shows the push messages the service sends ({title, body, url})
// and opens the notification's page when it is clicked.
/** The JSON payload, or its text as the body. */
function readPayload(data) {
  if (!data) return {};
  try {
    return data.json();
  } catch {
    return { body: data.text() };
  }
}

self.addEventListener('push', (event) => {
  const payload = readPayload(event.data);
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
