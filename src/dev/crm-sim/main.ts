import { pathToFileURL } from 'node:url';
import { DEV_CRM_API_KEY } from '../../config.js';
import { CRM_INSTITUTIONS } from './fixtures.js';
import { CRM_SIM_CONTROL_PATH, startCrmSim, type CrmSim } from './server.js';

function studentsFrom(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new Error(`CRM_SIM_STUDENTS must be a whole number from 1 to 100000, not ${value}`);
  return n;
}

/**
 * `lms crm-sim`: runs the simulator alone until SIGINT/SIGTERM.
 * CRM_SIM_PORT (default 4010), CRM_SIM_HOST (default 127.0.0.1), CRM_SIM_API_KEY
 * (default CRM_API_KEY, else the dev key the service also defaults to), CRM_SIM_STUDENTS
 * (students per institution, default the fixed 30). Its fault switch is set from outside with
 * `PUT /_sim/fault` (CRM_SIM_CONTROL_PATH).
 */
export async function runCrmSimCli(env: NodeJS.ProcessEnv = process.env, out: Pick<Console, 'log'> = console, opts: { handleSignals?: boolean } = {}): Promise<CrmSim> {
  const sim = await startCrmSim({
    port: Number(env.CRM_SIM_PORT || 4010),
    host: env.CRM_SIM_HOST || '127.0.0.1',
    apiKey: env.CRM_SIM_API_KEY || env.CRM_API_KEY || DEV_CRM_API_KEY,
    students: studentsFrom(env.CRM_SIM_STUDENTS),
  });
  out.log(`CRM simulator listening on ${sim.protocol}://${sim.baseDomain}`);
  out.log(`  tenants: ${CRM_INSTITUTIONS.map((i) => `${sim.protocol}://${i.slug}.${sim.baseDomain} (${i.id})`).join(', ')}`);
  out.log(`  point the service at it with:`);
  out.log(`  CRM_PROTOCOL=${sim.protocol} CRM_BASE_DOMAIN=${sim.baseDomain} CRM_API_KEY=${sim.apiKey}`);
  out.log(
    `  faults: curl -X PUT -H 'authorization: Bearer ${sim.apiKey}' -H 'content-type: application/json' http://${sim.baseDomain}${CRM_SIM_CONTROL_PATH} -d '{"fault":"slow","delayMs":2000}'`,
  );

  if (opts.handleSignals === false) return sim;
  const stop = () => {
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return sim;
}

// `tsx src/dev/crm-sim/main.ts` runs it directly.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runCrmSimCli().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
