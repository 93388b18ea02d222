import { resolve } from 'node:path';
import nodemailer from 'nodemailer';
import addressparser from 'nodemailer/lib/addressparser';
import type { Config } from '../../config.js';
import type { Logger } from '../logger.js';
import { storeEml } from './mailbox.js';

/**
 * Outgoing e-mail (DESIGN.md §2, §4): SMTP through nodemailer when `SMTP_URL` is set, otherwise
 * the development mailbox, one `.eml` file a message in `DATA_DIR/mailbox`.
 */

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** RFC 5322 Message-ID to set, e.g. `<deliveryId@lms>` (lets receivers dedupe) */
  messageId?: string;
  headers?: Record<string, string>;
  /** Files attached to the message (a scheduled report's export). */
  attachments?: MailAttachment[];
}

export interface MailAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

export interface Mailer {
  send(msg: MailMessage): Promise<{ messageId: string }>;
  close(): Promise<void>;
  /** human text of where mail goes, e.g. "smtp://127.0.0.1:2525" or "mailbox directory .data/mailbox" */
  describe(): string;
}

/**
 * A message that was not delivered. `permanent`: sending the same message again would fail the
 * same way (the address is invalid or the server refused it with a 5xx reply); otherwise the
 * server could not be reached or deferred it (4xx), and a retry may succeed.
 * `reason`: `invalid_address`, `smtp_rejected` (permanent) or `smtp_unavailable` (transient).
 */
export class MailError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    readonly reason: string,
  ) {
    super(message);
    this.name = 'MailError';
  }
}

/** Timeouts of one SMTP connection: a dead server fails the attempt instead of holding the job. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

export function createMailer(config: Pick<Config, 'SMTP_URL' | 'MAIL_FROM' | 'DATA_DIR'>, log: Logger): Mailer {
  return config.SMTP_URL ? smtpMailer(config.SMTP_URL, config.MAIL_FROM, log) : mailboxMailer(resolve(config.DATA_DIR, 'mailbox'), config.MAIL_FROM, log);
}

function smtpMailer(url: string, from: string, log: Logger): Mailer {
  const transport = nodemailer.createTransport({ url, pool: true, maxConnections: 2, ...SMTP_TIMEOUTS });
  const where = describeSmtpUrl(url);
  // A transport-level error outside a send (none is known of the pool today) must not crash the worker.
  transport.on('error', (err) => log.warn(`[lms] SMTP transport ${where}: ${err.message}`));
  return {
    async send(msg) {
      const to = recipient(msg.to);
      try {
        const info = await transport.sendMail(mailOptions(msg, to, from));
        if (info.rejected.length > 0) throw new MailError(`SMTP server rejected the recipient ${to}`, true, 'invalid_address');
        return { messageId: info.messageId };
      } catch (err) {
        throw toMailError(err, where);
      }
    },
    async close() {
      transport.close();
    },
    describe: () => where,
  };
}

function mailboxMailer(dir: string, from: string, log: Logger): Mailer {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    async send(msg) {
      const to = recipient(msg.to);
      const info = await transport.sendMail(mailOptions(msg, to, from));
      const file = await storeEml(dir, info.message as Buffer);
      log.info(`[lms] mail to ${to} "${msg.subject}" stored in ${file} (no SMTP_URL)`);
      return { messageId: info.messageId };
    },
    async close() {
      transport.close();
    },
    describe: () => `mailbox directory ${dir}`,
  };
}

function mailOptions(msg: MailMessage, to: string, from: string) {
  return {
    from,
    to,
    subject: msg.subject,
    text: msg.text,
    ...(msg.html !== undefined ? { html: msg.html } : {}),
    ...(msg.messageId ? { messageId: msg.messageId } : {}),
    ...(msg.headers ? { headers: msg.headers } : {}),
    ...(msg.attachments?.length ? { attachments: msg.attachments.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType })) } : {}),
  };
}

/** The one address a message goes to; anything else (no address, a list, a group, line breaks) is a permanent failure. */
function recipient(to: string): string {
  const invalid = () => new MailError(`invalid recipient address ${JSON.stringify(to)}`, true, 'invalid_address');
  if (typeof to !== 'string' || /[\r\n]/.test(to)) throw invalid();
  const parsed = addressparser(to, { flatten: true });
  const address = parsed.length === 1 ? parsed[0].address : '';
  if (!/^[^\s@<>()",;]+@[^\s@<>()",;]+$/.test(address)) throw invalid();
  return to.trim();
}

interface SmtpFailure {
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  message?: string;
}

/**
 * nodemailer's failure as a MailError. RFC 5321: a 5yz reply is a permanent refusal (503, bad
 * sequence of commands, excepted: the session was in the wrong state, not the message); 4yz is
 * transient. A refused recipient (RCPT TO) or an envelope nodemailer rejects before sending
 * is `invalid_address`; another 5yz (sender, content, size) is `smtp_rejected`. Failed
 * authentication is the server's configuration, not the message's: transient, so the
 * deliveries wait for the fix instead of being dropped. Connection errors and timeouts are
 * transient.
 */
export function toMailError(err: unknown, where: string): MailError {
  if (err instanceof MailError) return err;
  const e = (err ?? {}) as SmtpFailure;
  const detail = e.response ? `${e.message}: ${e.response}` : (e.message ?? String(err));
  const code = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  if (e.code === 'EAUTH' || e.code === 'ENOAUTH') return new MailError(`SMTP authentication at ${where} failed: ${detail}`, false, 'smtp_unavailable');
  if (code !== undefined && code >= 500 && code < 600 && code !== 503) {
    const addressRefused = e.code === 'EENVELOPE' && e.command === 'RCPT TO';
    return new MailError(`SMTP server ${where} refused the message (${code}): ${detail}`, true, addressRefused ? 'invalid_address' : 'smtp_rejected');
  }
  if (code === undefined && e.code === 'EENVELOPE') return new MailError(`invalid envelope: ${detail}`, true, 'invalid_address');
  return new MailError(`SMTP server ${where} unavailable: ${detail}`, false, 'smtp_unavailable');
}

/** The SMTP URL without its credentials, for logs and banners. */
export function describeSmtpUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
}
