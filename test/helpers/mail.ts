import { randomUUID } from 'node:crypto';
import type { MailError, Mailer, MailMessage } from '../../src/platform/mail/mailer.js';

/**
 * The test app's default mailer: keeps every message in memory instead of sending it.
 * `failWith` makes sends fail, for example `m.failWith = () => new MailError('down', false, 'smtp_unavailable')`.
 * For real SMTP in a test, pass `mailer: createMailer({ SMTP_URL: smtp.url, … })` with
 * `startTestSmtp()` from `./smtp.js`.
 */
export class RecordingMailer implements Mailer {
  readonly sent: Array<MailMessage & { messageId: string }> = [];
  failWith: ((msg: MailMessage) => MailError | undefined) | undefined;
  closed = false;

  async send(msg: MailMessage): Promise<{ messageId: string }> {
    const err = this.failWith?.(msg);
    if (err) throw err;
    const messageId = msg.messageId ?? `<${randomUUID()}@lms.test>`;
    this.sent.push({ ...msg, messageId });
    return { messageId };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  describe(): string {
    return 'in-memory test mailer';
  }
}
