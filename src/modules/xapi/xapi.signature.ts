import { compactVerify, decodeProtectedHeader, importX509 } from 'jose';
import { AppError } from '../../platform/http/errors.js';
import { isObject, SIGNATURE_USAGE, type Json, type JsonObject } from './xapi.keys.js';
import { sameStatement } from './xapi.format.js';
import { validateStatement } from './xapi.validation.js';

/**
 * Signed statements (xAPI 1.0.3 Data 2.6): an attachment with the signature usage type whose
 * bytes are a JWS in compact form, signed RS256, RS384 or RS512, whose payload is the statement
 * as it was before the signature was attached. Checked here: the JWS shape, the algorithm, the
 * payload against the statement, and, when the header carries an `x5c` certificate chain, the
 * signature itself with the first certificate's key (jose). Without `x5c` the LRS has no key to
 * verify with; the shape and the payload are still checked.
 */

const ALGORITHMS = ['RS256', 'RS384', 'RS512'];
const bad = (message: string) => new AppError('VALIDATION_ERROR', `Signed statement: ${message}`);

/** The statement with its signature attachment(s) taken off. */
function unsigned(statement: JsonObject): JsonObject {
  const copy: JsonObject = { ...statement };
  const rest = (Array.isArray(statement.attachments) ? statement.attachments : []).filter((a) => !(isObject(a) && a.usageType === SIGNATURE_USAGE));
  if (rest.length > 0) copy.attachments = rest;
  else delete copy.attachments;
  return copy;
}

export const signatureAttachments = (statement: JsonObject): JsonObject[] =>
  (Array.isArray(statement.attachments) ? statement.attachments : []).filter((a): a is JsonObject => isObject(a) && a.usageType === SIGNATURE_USAGE);

export async function checkSignature(statement: JsonObject, jwsBytes: Buffer): Promise<void> {
  const jws = jwsBytes.toString('utf8').trim();
  if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(jws)) throw bad('the signature is not a JWS in compact serialization');
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    throw bad('the JWS header cannot be read');
  }
  if (!ALGORITHMS.includes(String(header.alg))) throw bad('the JWS must be signed with RS256, RS384 or RS512');
  let payload: Json;
  try {
    payload = JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8')) as Json;
  } catch {
    throw bad('the JWS payload is not JSON');
  }
  let original: JsonObject;
  try {
    original = validateStatement(payload, 'signature.payload');
  } catch {
    throw bad('the JWS payload is not a valid statement');
  }
  if (!sameStatement(original, unsigned(statement))) throw bad('the JWS payload does not match the statement');
  if (Array.isArray(header.x5c) && header.x5c.length > 0) {
    try {
      const pem = `-----BEGIN CERTIFICATE-----\n${header.x5c[0]}\n-----END CERTIFICATE-----`;
      const key = await importX509(pem, String(header.alg));
      await compactVerify(jws, key);
    } catch {
      throw bad('the signature does not verify with the key of its x5c certificate');
    }
  }
}
