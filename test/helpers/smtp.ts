import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/**
 * A real SMTP server on a free loopback port for tests: what arrives is parsed with mailparser
 * into `messages` (from, to, subject, text, html, messageId, headers…); `reject(pattern)`
 * makes it refuse matching recipients with `550` at RCPT TO, as a server does for an unknown
 * mailbox. Point a mailer at it with `SMTP_URL: smtp.url`.
 */
export interface TestSmtp {
  url: string;
  port: number;
  messages: ParsedMail[];
  /** Resolves once `n` messages have arrived (in all), or rejects after `timeoutMs`. */
  waitFor(n: number, timeoutMs?: number): Promise<ParsedMail[]>;
  /** Recipients matching `addressPattern` (a RegExp, or a substring) are refused with 550 from now on. */
  reject(addressPattern: RegExp | string): void;
  close(): Promise<void>;
}

export async function startTestSmtp(): Promise<TestSmtp> {
  const messages: ParsedMail[] = [];
  const rejected: Array<RegExp | string> = [];
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    closeTimeout: 200,
    onRcptTo(address, _session, callback) {
      const refused = rejected.some((p) => (typeof p === 'string' ? address.address.includes(p) : p.test(address.address)));
      if (!refused) return callback();
      callback(Object.assign(new Error(`5.1.1 <${address.address}>: unknown mailbox`), { responseCode: 550 }));
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          messages.push(mail);
          for (const wake of waiters) wake();
          callback();
        },
        (err: Error) => callback(err),
      );
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const { port } = server.server.address() as { port: number };
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    reject: (pattern) => void rejected.push(pattern),
    waitFor(n, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (messages.length < n) return;
          cleanup();
          resolve(messages);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`expected ${n} message(s) at the test SMTP server within ${timeoutMs} ms, got ${messages.length}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
