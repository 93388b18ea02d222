/**
 * The delivery transports in the app's collaborators (Deps): the test app's defaults and a
 * test's own mailer and push sender.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { PushSender } from '../../src/platform/push/push.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { RecordingMailer } from '../helpers/mail.js';

const apps: TestApp[] = [];
afterAll(async () => {
  for (const t of apps) await t.close();
});

describe('transports in Deps', () => {
  it('the test app records mail in memory and builds the real push sender from its config', async () => {
    const t = await createTestApp();
    apps.push(t);
    expect(t.deps.mailer).toBe(t.mailer);
    expect(t.mailer).toBeInstanceOf(RecordingMailer);
    const { messageId } = await t.deps.mailer.send({ to: 'ada@school.test', subject: 'Hi', text: 'Hello', messageId: '<m1@lms>' });
    expect(messageId).toBe('<m1@lms>');
    expect(t.sentMail()).toEqual([{ to: 'ada@school.test', subject: 'Hi', text: 'Hello', messageId: '<m1@lms>' }]);
    // No VAPID keys in the test config: web push is not configured; mobile push logs.
    expect(await t.deps.push.send({ token: '{}', platform: 'web', provider: 'webpush' }, { title: 't', body: 'b' })).toMatchObject({ ok: false, reason: 'push_not_configured' });
    expect(await t.deps.push.send({ token: 'fcm-token', platform: 'android', provider: 'fcm' }, { title: 't', body: 'b' })).toEqual({ ok: true });
  });

  it("a test's own mailer and push sender are used as they are, and left open", async () => {
    const mailer = new RecordingMailer();
    const push: PushSender = { send: async () => ({ ok: false, gone: true, permanent: true, reason: 'fake' }) };
    const t = await createTestApp({ mailer, push });
    expect(t.deps.mailer).toBe(mailer);
    expect(t.deps.push).toBe(push);
    expect(() => t.sentMail()).not.toThrow();
    await t.close();
    expect(mailer.closed).toBe(false);
  });
});
