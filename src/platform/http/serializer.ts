import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import type { ZodType } from 'zod';

/**
 * Response serializer: the route's zod schema strips undeclared fields (nothing leaks that the
 * contract does not name). A payload that does not match is a bug; it is logged and sent as is
 * rather than turned into a 500 for the client.
 */
export const lenientZodSerializer: FastifySerializerCompiler<ZodType> = ({ schema, method, url }) => {
  return (data) => {
    const result = schema.safeParse(data);
    if (result.success) return JSON.stringify(result.data);
    console.error(`[lms] response of ${method} ${url} does not match its schema: ${result.error.message.slice(0, 1000)}`);
    return JSON.stringify(data);
  };
};
