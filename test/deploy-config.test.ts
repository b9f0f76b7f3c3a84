// Invariants of what a platform team deploys: docker-compose.yml, both Dockerfiles, .dockerignore,
// gateway/kong/kong.conf and the access log format Kong is given. Nobody runs Docker here (nor in
// CI), so these are read, not run; each invariant is proved able to fail by a mutation. The Kong
// container's health check script is run for real against a stand-in status API.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';
import { invariantsHold, mutationsCaught, type Invariants, type Mutation } from './helpers/invariants';
import type { Parsed } from './helpers/parsed';

const ROOT = join(__dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

type Compose = { services: Record<string, Parsed>; networks?: Record<string, unknown> };
type Deploy = {
  compose: Compose;
  kongConf: Map<string, string>;
  kongDockerfile: string;
  serviceDockerfile: string;
  dockerignore: string[];
  logInclude: string;
  proxyInclude: string;
  kongYaml: Parsed;
  keysDockerfile: string;
  gitignore: string[];
};

function parseKongConf(text: string): Map<string, string> {
  const conf = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\s*([a-z_]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (m && !line.trim().startsWith('#')) conf.set(m[1]!, m[2]!);
  }
  return conf;
}

const load = (): Deploy => ({
  compose: parse(read('docker-compose.yml'), { merge: true }) as Compose,
  kongConf: parseKongConf(read('gateway/kong/kong.conf')),
  kongDockerfile: read('gateway/Dockerfile'),
  serviceDockerfile: read('Dockerfile'),
  dockerignore: read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#')),
  logInclude: read('gateway/kong/nginx-http-jobs.conf'),
  proxyInclude: read('gateway/kong/nginx-proxy-jobs.conf'),
  kongYaml: parse(read('kong.yaml'), { merge: true }),
  keysDockerfile: read('tools/keys/Dockerfile'),
  gitignore: read('.gitignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#')),
});

/** Every `${...}` compose interpolates anywhere in a service (environment, command, image, ...). */
function interpolations(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string') for (const m of value.matchAll(/\$\{([^}]*)\}/g)) found.push(m[1]!);
  else if (Array.isArray(value)) for (const v of value) interpolations(v, found);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) interpolations(v, found);
  return found;
}

/** What the compose file requires of the operator, one message for all (compose spec: `${VAR:?err}` stops with err when VAR is unset or empty). */
const required = (name: string) => `${name}:?set ${name}, e.g. ${name}=$(openssl rand -hex 32)`;
const SECRETS = ['GATEWAY_SECRET', 'REDIS_PASSWORD', 'MARIADB_PASSWORD', 'MARIADB_ROOT_PASSWORD', 'KONG_PG_PASSWORD'];
// Set only during a rotation (docs/operations.md): empty is "no previous key", never a weak one.
const OPTIONAL_SECRETS = ['WEBHOOK_SECRETS_KEY_PREVIOUS'];

const KONG_IMAGE_SERVICES = ['kong', 'kong-migrations', 'kong-migrations-finish'];
const DECK_SERVICES = ['deck-sync', 'deck-sync-demo'];
/** nginx variables that would put the query string or a key header into a log line. */
const UNSAFE_LOG_VARIABLES =
  /\$(request|request_uri|args|query_string|arg_\w+|http_x_api_key|http_api_key|is_args|request_body)\b/;

const env = (service: Parsed): Record<string, string> => service?.environment ?? {};
const command = (service: Parsed): string => [service?.entrypoint ?? [], service?.command ?? []].flat().join(' ');
const dockerfileLines = (text: string) => text.split('\n').filter((l) => !l.trim().startsWith('#'));

const invariants: Invariants<Deploy> = {
  'every password and secret compose needs is required, with the same message, never a default': ({ compose }) => {
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const [name, s] of Object.entries(compose.services)) {
      for (const expression of interpolations(s)) {
        const variable = /^\w+/.exec(expression)?.[0] ?? expression;
        if (!/PASSWORD|SECRET/.test(variable)) continue;
        seen.add(variable);
        if (
          expression !== required(variable) &&
          !(OPTIONAL_SECRETS.includes(variable) && expression === `${variable}:-`)
        )
          problems.push(`${name}: \${${expression}}`);
      }
    }
    for (const secret of SECRETS) if (!seen.has(secret)) problems.push(`${secret} is not asked for`);
    const db = env(compose.services.mariadb);
    if (
      db.MARIADB_PASSWORD !== `\${${required('MARIADB_PASSWORD')}}` ||
      db.MARIADB_ROOT_PASSWORD !== `\${${required('MARIADB_ROOT_PASSWORD')}}`
    )
      problems.push('mariadb passwords');
    if (env(compose.services['kong-database']).POSTGRES_PASSWORD !== `\${${required('KONG_PG_PASSWORD')}}`)
      problems.push('postgres password');
    for (const name of KONG_IMAGE_SERVICES) {
      // Their environment merges the x-kong-env block (`<<: *kong-env`).
      const kongEnv = { ...((env(compose.services[name]) as Parsed)['<<'] ?? {}), ...env(compose.services[name]) };
      if (kongEnv.KONG_PG_PASSWORD !== `\${${required('KONG_PG_PASSWORD')}}`) problems.push(`${name} KONG_PG_PASSWORD`);
    }
    return problems;
  },

  "partner keys reach Kong: deck-sync syncs partner-keys.yaml last with partner-keys.env's values": ({ compose }) => {
    const problems: string[] = [];
    const sync = compose.services['deck-sync'];
    const order = [...command(sync).matchAll(/deck gateway sync \/deck\/([\w.-]+)/g)].map((m) => m[1]);
    if (JSON.stringify(order) !== JSON.stringify(['kong.yaml', 'partners.yaml', 'partner-keys.yaml']))
      problems.push(`deck-sync syncs ${order.join(', ')}`);
    if (!/&&[^&]*partners\.yaml[^&]*&&[^&]*partner-keys\.yaml/.test(command(sync)))
      problems.push('a failed sync does not stop the next');
    if (!((sync?.volumes ?? []) as string[]).includes('./partner-keys.yaml:/deck/partner-keys.yaml:ro'))
      problems.push('partner-keys.yaml not mounted');
    const envFiles = ((sync?.env_file ?? []) as Array<{ path: string; required?: boolean }>).map((f) => f.path);
    if (JSON.stringify(envFiles) !== JSON.stringify(['./partner-keys.env']))
      problems.push(`deck-sync env_file ${envFiles.join(', ')}`);
    for (const [name, s] of Object.entries(compose.services)) {
      if (name !== 'deck-sync' && JSON.stringify(s.env_file ?? []).includes('partner-keys.env'))
        problems.push(`${name} reads partner-keys.env`);
    }
    return problems;
  },

  "the keys tool runs in Kong's network namespace, only when asked, on the project's files": ({
    compose,
    keysDockerfile,
  }) => {
    const keys = compose.services.keys;
    if (!keys) return ['no keys service'];
    const problems: string[] = [];
    if (keys.network_mode !== 'service:kong') problems.push(`network_mode ${String(keys.network_mode)}`);
    if (keys.networks || keys.ports) problems.push('keys joins networks or publishes ports');
    if (env(keys).KONG_ADMIN_URL !== 'http://127.0.0.1:8001')
      problems.push(`KONG_ADMIN_URL ${String(env(keys).KONG_ADMIN_URL)}`);
    if (!(keys.profiles ?? []).length) problems.push('keys starts with docker compose up');
    if (keys.build?.dockerfile !== 'tools/keys/Dockerfile')
      problems.push(`keys builds ${String(keys.build?.dockerfile)}`);
    const workdir = [...keysDockerfile.matchAll(/^WORKDIR (\S+)$/gm)].at(-1)?.[1];
    if (!((keys.volumes ?? []) as string[]).includes(`./:${String(workdir)}`))
      problems.push(`the project directory is not mounted at the image's working directory ${String(workdir)}`);
    for (const line of dockerfileLines(keysDockerfile).filter(
      (l) => /^\s*(COPY|ADD)\b/.test(l) && !/--from=/.test(l),
    )) {
      if (
        !/^COPY (package\.json package-lock\.json|tsconfig\.json tsconfig\.build\.json|tools\/keys) \.\//.test(
          line.trim(),
        )
      )
        problems.push(`keys image: ${line.trim()}`);
    }
    return problems;
  },

  'partner-keys.env stays out of git and of every build context': ({ gitignore, dockerignore }) => {
    const problems: string[] = [];
    if (!gitignore.includes('partner-keys.env')) problems.push('.gitignore lacks partner-keys.env');
    if (!dockerignore.includes('partner-keys.env')) problems.push('.dockerignore lacks partner-keys.env');
    return problems;
  },

  'one build of the Kong image, run by every Kong service': ({ compose }) => {
    const builders = Object.entries(compose.services).filter(([, s]) => s.build?.dockerfile === 'gateway/Dockerfile');
    if (builders.length !== 1) return [`${builders.length} services build gateway/Dockerfile`];
    const image = builders[0]![1].image;
    return KONG_IMAGE_SERVICES.filter((name) => compose.services[name]?.image !== image).map(
      (name) => `${name} does not run ${String(image)}`,
    );
  },

  "the Admin API listens only inside Kong's network namespace, without Kong Manager": ({ compose, kongConf }) => {
    const problems: string[] = [];
    if (kongConf.get('admin_listen') !== '127.0.0.1:8001')
      problems.push(`admin_listen ${String(kongConf.get('admin_listen'))}`);
    if (kongConf.get('admin_gui_listen') !== 'off')
      problems.push(`admin_gui_listen ${String(kongConf.get('admin_gui_listen'))}`);
    for (const [name, s] of Object.entries(compose.services)) {
      for (const key of Object.keys(env(s))) {
        if (/^KONG_ADMIN_(GUI_)?LISTEN$/.test(key)) problems.push(`${name} overrides ${key}`);
      }
      for (const port of (s.ports ?? []) as string[]) {
        // The container port (last part) of an admin or Kong Manager listener.
        if (/(^|:)(8001|8444|8002|8445)(\/tcp)?$/.test(String(port))) {
          problems.push(`${name} publishes ${port}`);
        }
      }
    }
    for (const name of DECK_SERVICES) {
      const s = compose.services[name];
      if (s?.network_mode !== 'service:kong') problems.push(`${name} does not share Kong's network namespace`);
      if (s?.networks) problems.push(`${name} joins networks`);
      if (env(s).DECK_KONG_ADDR !== 'http://127.0.0.1:8001')
        problems.push(`${name} DECK_KONG_ADDR ${String(env(s).DECK_KONG_ADDR)}`);
    }
    return problems;
  },

  'each container is on the networks it needs and no other': ({ compose }) => {
    const want: Record<string, string[]> = {
      kong: ['kong-db-net', 'redis-net', 'service-net'],
      'jobs-service-1': ['db-net', 'service-net'],
      'jobs-service-2': ['db-net', 'service-net'],
      mariadb: ['db-net'],
      redis: ['redis-net'],
      'kong-database': ['kong-db-net'],
      'kong-migrations': ['kong-db-net'],
      'kong-migrations-finish': ['kong-db-net'],
      'demo-seed': ['db-net'],
      'webhook-dispatcher': ['db-net', 'service-net'],
    };
    return Object.entries(want).flatMap(([name, nets]) => {
      const got = [...((compose.services[name]?.networks ?? []) as string[])].sort();
      return JSON.stringify(got) === JSON.stringify(nets)
        ? []
        : [`${name} on ${got.join(', ')}, expected ${nets.join(', ')}`];
    });
  },

  'decK is pinned to a release': ({ compose }) =>
    DECK_SERVICES.flatMap((name) => {
      const image = String(compose.services[name]?.image);
      const m = /^kong\/deck:\$\{DECK_TAG:-(v\d+\.\d+\.\d+)\}$/.exec(image);
      return m ? [] : [`${name} image ${image}`];
    }),

  'Kong migrations: bootstrap and up before Kong starts, finish once it is ready': ({ compose }) => {
    const problems: string[] = [];
    const mig = compose.services['kong-migrations'];
    const fin = compose.services['kong-migrations-finish'];
    if (!/kong migrations bootstrap/.test(command(mig))) problems.push('no bootstrap');
    if (!/kong migrations up/.test(command(mig))) problems.push('no migrations up');
    if (/finish/.test(command(mig))) problems.push('finish runs before the new Kong is up');
    if (compose.services.kong?.depends_on?.['kong-migrations']?.condition !== 'service_completed_successfully') {
      problems.push('kong does not wait for its migrations');
    }
    if (command(fin) !== 'kong migrations finish') problems.push(`finish command ${command(fin)}`);
    if (fin?.depends_on?.kong?.condition !== 'service_healthy') problems.push('finish does not wait for a ready Kong');
    return problems;
  },

  "Kong's health is /status/ready on its status listener": ({ compose, kongConf, kongDockerfile }) => {
    const problems: string[] = [];
    if (!/HEALTHCHECK[^\n]*CMD \["\/usr\/local\/bin\/jobs-kong-ready"\]/.test(kongDockerfile))
      problems.push('HEALTHCHECK is not jobs-kong-ready');
    if (!/COPY gateway\/kong\/ready\.sh \/usr\/local\/bin\/jobs-kong-ready/.test(kongDockerfile))
      problems.push('ready.sh not in the image');
    const port = /KONG_READY_PORT:-(\d+)/.exec(read('gateway/kong/ready.sh'))?.[1];
    if (kongConf.get('status_listen') !== `0.0.0.0:${port}`)
      problems.push(`status_listen ${String(kongConf.get('status_listen'))} vs ready.sh port ${port}`);
    if (compose.services.kong?.healthcheck) problems.push('compose overrides the image health check');
    return problems;
  },

  'the jobs database is MariaDB 10.11': ({ compose }) => {
    const problems: string[] = [];
    if (compose.services.mariadb?.image !== 'mariadb:10.11')
      problems.push(`image ${String(compose.services.mariadb?.image)}`);
    if (Object.values(compose.services).some((s) => /^mysql:/.test(String(s.image)))) problems.push('a mysql image');
    if (!/@mariadb:3306\//.test(String(env(compose.services['jobs-service-1']).DATABASE_URL)))
      problems.push('service not on mariadb');
    return problems;
  },

  'rate-limit counters live in the compose Redis, its password only in the environment': ({ compose, kongYaml }) => {
    const problems: string[] = [];
    if (!compose.services.redis) return ['no redis service'];
    const hosts = new Set<string>();
    for (const s of kongYaml.services ?? []) {
      for (const r of s.routes ?? []) {
        for (const p of r.plugins ?? []) if (p.name === 'job-rate-limits') hosts.add(p.config?.redis?.host);
      }
    }
    if (hosts.size !== 1 || !hosts.has('redis')) problems.push(`kong.yaml redis hosts ${[...hosts].join(', ')}`);
    if (!/^\$\{REDIS_PASSWORD:\?/.test(String(env(compose.services.kong).JOBS_REDIS_PASSWORD)))
      problems.push('kong gets no required REDIS_PASSWORD');
    if (!/^\$\{REDIS_PASSWORD:\?/.test(String(env(compose.services.redis).REDIS_PASSWORD)))
      problems.push('redis gets no required REDIS_PASSWORD');
    if (!/requirepass/.test(command(compose.services.redis))) problems.push('redis without a password');
    return problems;
  },

  'the demo is a profile: production syncs never load demo.yaml': ({ compose }) => {
    const problems: string[] = [];
    for (const [name, s] of Object.entries(compose.services)) {
      const usesDemo =
        /demo\.yaml/.test(command(s)) || ((s.volumes ?? []) as string[]).some((v) => /demo\.yaml/.test(v));
      const seeds = /seed/.test(command(s));
      if ((usesDemo || seeds) && !(s.profiles ?? []).includes('demo'))
        problems.push(`${name} loads demo data outside the demo profile`);
    }
    const sync = command(compose.services['deck-sync']);
    if (!/sync \/deck\/kong\.yaml/.test(sync) || !/sync \/deck\/partners\.yaml/.test(sync))
      problems.push(`deck-sync runs ${sync}`);
    if (!/sync \/deck\/demo\.yaml/.test(command(compose.services['deck-sync-demo']))) problems.push('no demo sync');
    return problems;
  },

  'the service image never seeds demo data and holds no local gateway': ({
    compose,
    serviceDockerfile,
    dockerignore,
  }) => {
    const problems: string[] = [];
    if (/SEED_DEMO_DATA/.test(dockerfileLines(serviceDockerfile).join('\n')))
      problems.push('Dockerfile sets SEED_DEMO_DATA');
    if ('SEED_DEMO_DATA' in env(compose.services['jobs-service-1'])) problems.push('jobs-service sets SEED_DEMO_DATA');
    for (const line of dockerfileLines(serviceDockerfile).filter((l) => /^\s*(COPY|ADD)\b/.test(l))) {
      if (/\b(gateway|scripts|test)\b/.test(line)) problems.push(`Dockerfile: ${line.trim()}`);
    }
    for (const entry of ['gateway/local', 'scripts', 'test']) {
      if (!dockerignore.includes(entry)) problems.push(`.dockerignore lacks ${entry}`);
    }
    return problems;
  },

  'every line Kong writes goes through the key redaction filter': ({ compose, kongDockerfile, kongConf }) => {
    const problems: string[] = [];
    if (!/^ENTRYPOINT \["\/usr\/local\/bin\/jobs-kong-entrypoint"\]$/m.test(kongDockerfile))
      problems.push('ENTRYPOINT is not the redacting wrapper');
    if (!/COPY gateway\/kong\/entrypoint\.sh \/usr\/local\/bin\/jobs-kong-entrypoint/.test(kongDockerfile))
      problems.push('entrypoint.sh not in the image');
    if (!/redact-keys\.lua/.test(kongDockerfile)) problems.push('redact-keys.lua not in the image');
    for (const name of KONG_IMAGE_SERVICES) {
      if (compose.services[name]?.entrypoint) problems.push(`${name} overrides the entrypoint`);
    }
    for (const key of ['proxy_error_log', 'admin_error_log', 'status_error_log']) {
      if (kongConf.get(key) !== '/dev/stderr') problems.push(`${key} ${String(kongConf.get(key))} bypasses the filter`);
    }
    return problems;
  },

  'access logs use jobs_safe, which never writes a query string or a key header': ({
    kongConf,
    logInclude,
    kongDockerfile,
  }) => {
    const problems: string[] = [];
    for (const key of ['proxy_access_log', 'admin_access_log']) {
      // A buffer of at most 4k (PIPE_BUF) keeps each worker's write to the filter's FIFO whole.
      if (!/^\/dev\/stdout jobs_safe( buffer=[1-4]k flush=\d+s)?$/.test(String(kongConf.get(key))))
        problems.push(`${key} ${String(kongConf.get(key))}`);
    }
    if (kongConf.get('status_access_log') !== 'off') problems.push('status access log on');
    const format = /log_format jobs_safe[^;]*;/.exec(logInclude)?.[0];
    if (!format) return [...problems, 'no jobs_safe log format'];
    const unsafe = UNSAFE_LOG_VARIABLES.exec(format);
    if (unsafe) problems.push(`jobs_safe logs ${unsafe[0]}`);
    const include = kongConf.get('nginx_http_include');
    if (
      include !== '/etc/kong/nginx-http-jobs.conf' ||
      !/nginx-http-jobs\.conf[\s\S]*\/etc\/kong\//.test(kongDockerfile)
    ) {
      problems.push(`nginx_http_include ${String(include)} is not the file the image ships`);
    }
    return problems;
  },

  'the access log records the request id that Kong error bodies quote': ({ kongConf, logInclude }) => {
    const problems: string[] = [];
    if (!/"request_id":"\$kong_request_id"/.test(logInclude)) problems.push('jobs_safe has no $kong_request_id');
    if (!/X-Kong-Request-Id/i.test(String(kongConf.get('headers')))) problems.push('X-Kong-Request-Id header off');
    return problems;
  },

  "X-Request-ID (the client's, else $kong_request_id) reaches the service and every answer, set by nginx": ({
    kongConf,
    logInclude,
    proxyInclude,
  }) => {
    const problems: string[] = [];
    if (
      !/map \$http_x_request_id \$jobs_request_id \{\s*""\s+\$kong_request_id;\s*default\s+\$http_x_request_id;\s*\}/.test(
        logInclude,
      )
    )
      problems.push('no $jobs_request_id map');
    if (kongConf.get('nginx_location_proxy_set_header') !== 'X-Request-ID $jobs_request_id')
      problems.push('X-Request-ID not sent upstream');
    if (!/^more_set_headers 'X-Request-ID: \$jobs_request_id';$/m.test(proxyInclude))
      problems.push('X-Request-ID not on every answer');
    if (!/"correlation_id":"\$jobs_request_id"/.test(logInclude))
      problems.push('the access log lacks the request id the service got');
    return problems;
  },

  'the service and the webhook dispatcher require one secrets key, with no default, and the dispatcher runs the service image':
    ({ compose }) => {
      const problems: string[] = [];
      for (const name of ['jobs-service-1', 'jobs-service-2', 'webhook-dispatcher']) {
        const value = String(compose.services[name]?.environment?.WEBHOOK_SECRETS_KEY);
        if (
          !/^\$\{WEBHOOK_SECRETS_KEY:\?set WEBHOOK_SECRETS_KEY, e\.g\. WEBHOOK_SECRETS_KEY=\$\(openssl rand -hex 32\)\}$/.test(
            value,
          )
        )
          problems.push(`${name}: WEBHOOK_SECRETS_KEY is ${value}`);
      }
      const dispatcher = compose.services['webhook-dispatcher'];
      if (dispatcher?.image !== compose.services['jobs-service-1']?.image)
        problems.push('the dispatcher runs another image');
      if (
        JSON.stringify(dispatcher?.command) !==
        JSON.stringify(['chrt', '--idle', '0', 'node', 'dist/service/webhooks/dispatcher/main.js'])
      )
        problems.push(`the dispatcher runs ${JSON.stringify(dispatcher?.command)}`);
      if (dispatcher?.ports) problems.push('the dispatcher publishes a port');
      return problems;
    },

  'Kong loads every plugin of ours': ({ kongConf, kongDockerfile }) => {
    const problems: string[] = [];
    for (const plugin of readdirSync(join(ROOT, 'gateway', 'plugins'))) {
      if (!String(kongConf.get('plugins')).split(',').includes(plugin))
        problems.push(`kong.conf plugins lack ${plugin}`);
      if (
        !new RegExp(`COPY gateway/plugins/${plugin}/ /usr/local/share/lua/5\\.1/kong/plugins/${plugin}/`).test(
          kongDockerfile,
        )
      ) {
        problems.push(`${plugin} not copied into the image`);
      }
      if (!new RegExp(`ENV KONG_PLUGINS=[^\\n]*\\b${plugin}\\b`).test(kongDockerfile))
        problems.push(`KONG_PLUGINS lacks ${plugin}`);
    }
    return problems;
  },
};

describe('docker-compose.yml, Dockerfiles and kong.conf', () => invariantsHold(invariants, load));

describe('the deployment invariants catch a broken copy', () => {
  const mutations: Mutation<Deploy>[] = [
    [
      'a default database password',
      'every password and secret compose needs is required, with the same message, never a default',
      (d) => {
        d.compose.services.mariadb.environment.MARIADB_PASSWORD = '${MARIADB_PASSWORD:-jobs}';
      },
    ],
    [
      'a default previous sealing key',
      'every password and secret compose needs is required, with the same message, never a default',
      (d) => {
        d.compose.services['jobs-service-1'].environment.WEBHOOK_SECRETS_KEY_PREVIOUS =
          '${WEBHOOK_SECRETS_KEY_PREVIOUS:-changeme}';
      },
    ],
    [
      'a default in the service URL',
      'every password and secret compose needs is required, with the same message, never a default',
      (d) => {
        d.compose.services['jobs-service-1'].environment.DATABASE_URL =
          'mysql://jobs:${MARIADB_PASSWORD:-jobs}@mariadb:3306/jobs';
      },
    ],
    [
      'a default Kong database password',
      'every password and secret compose needs is required, with the same message, never a default',
      (d) => {
        d.compose.services['kong-migrations'].environment.KONG_PG_PASSWORD = '${KONG_PG_PASSWORD:-kong}';
      },
    ],
    [
      'a literal root password',
      'every password and secret compose needs is required, with the same message, never a default',
      (d) => {
        d.compose.services.mariadb.environment.MARIADB_ROOT_PASSWORD = 'jobs-root';
      },
    ],
    [
      'another message',
      'every password and secret compose needs is required, with the same message, never a default',
      (d) => {
        d.compose.services['kong-database'].environment.POSTGRES_PASSWORD = '${KONG_PG_PASSWORD:?required}';
      },
    ],
    [
      'keys not synced',
      "partner keys reach Kong: deck-sync syncs partner-keys.yaml last with partner-keys.env's values",
      (d) => {
        d.compose.services['deck-sync'].command = [
          'deck gateway sync /deck/kong.yaml && deck gateway sync /deck/partners.yaml',
        ];
      },
    ],
    [
      'keys before their groups',
      "partner keys reach Kong: deck-sync syncs partner-keys.yaml last with partner-keys.env's values",
      (d) => {
        d.compose.services['deck-sync'].command = [
          'deck gateway sync /deck/kong.yaml && deck gateway sync /deck/partner-keys.yaml && deck gateway sync /deck/partners.yaml',
        ];
      },
    ],
    [
      'keys synced after a failure',
      "partner keys reach Kong: deck-sync syncs partner-keys.yaml last with partner-keys.env's values",
      (d) => {
        d.compose.services['deck-sync'].command = [
          'deck gateway sync /deck/kong.yaml && deck gateway sync /deck/partners.yaml; deck gateway sync /deck/partner-keys.yaml',
        ];
      },
    ],
    [
      'no values for the references',
      "partner keys reach Kong: deck-sync syncs partner-keys.yaml last with partner-keys.env's values",
      (d) => {
        delete d.compose.services['deck-sync'].env_file;
      },
    ],
    [
      'the keys handed to the service',
      "partner keys reach Kong: deck-sync syncs partner-keys.yaml last with partner-keys.env's values",
      (d) => {
        d.compose.services['jobs-service-1'].env_file = ['./partner-keys.env'];
      },
    ],
    [
      'keys tool over a network',
      "the keys tool runs in Kong's network namespace, only when asked, on the project's files",
      (d) => {
        delete d.compose.services.keys.network_mode;
        d.compose.services.keys.networks = ['service-net'];
      },
    ],
    [
      'keys tool started by up',
      "the keys tool runs in Kong's network namespace, only when asked, on the project's files",
      (d) => {
        delete d.compose.services.keys.profiles;
      },
    ],
    [
      'keys tool given single files',
      "the keys tool runs in Kong's network namespace, only when asked, on the project's files",
      (d) => {
        d.compose.services.keys.volumes = [
          './partners.yaml:/state/partners.yaml',
          './partner-keys.yaml:/state/partner-keys.yaml',
        ];
      },
    ],
    [
      'keys image with the service in it',
      "the keys tool runs in Kong's network namespace, only when asked, on the project's files",
      (d) => {
        d.keysDockerfile = d.keysDockerfile.replace(
          'COPY tools/keys ./tools/keys',
          'COPY tools/keys ./tools/keys\nCOPY service ./service',
        );
      },
    ],
    [
      'keys in git',
      'partner-keys.env stays out of git and of every build context',
      (d) => {
        d.gitignore = d.gitignore.filter((l) => l !== 'partner-keys.env');
      },
    ],
    [
      'keys in the build context',
      'partner-keys.env stays out of git and of every build context',
      (d) => {
        d.dockerignore = d.dockerignore.filter((l) => l !== 'partner-keys.env');
      },
    ],
    [
      'a weak default secrets key',
      'the service and the webhook dispatcher require one secrets key, with no default, and the dispatcher runs the service image',
      (d) => {
        d.compose.services['webhook-dispatcher'].environment.WEBHOOK_SECRETS_KEY = '${WEBHOOK_SECRETS_KEY:-changeme}';
      },
    ],
    [
      "the dispatcher on the partners' side of Kong",
      'each container is on the networks it needs and no other',
      (d) => {
        d.compose.services['webhook-dispatcher'].networks.push('redis-net');
      },
    ],
    [
      'migrations build the Kong image again',
      'one build of the Kong image, run by every Kong service',
      (d) => {
        d.compose.services['kong-migrations'].build = { context: '.', dockerfile: 'gateway/Dockerfile' };
      },
    ],
    [
      'finish runs another image',
      'one build of the Kong image, run by every Kong service',
      (d) => {
        d.compose.services['kong-migrations-finish'].image = 'kong:3.9.1';
      },
    ],
    [
      'admin on every interface',
      "the Admin API listens only inside Kong's network namespace, without Kong Manager",
      (d) => {
        d.compose.services.kong.environment.KONG_ADMIN_LISTEN = '0.0.0.0:8001';
      },
    ],
    [
      'admin published',
      "the Admin API listens only inside Kong's network namespace, without Kong Manager",
      (d) => {
        d.compose.services.kong.ports.push('127.0.0.1:8001:8001/tcp');
      },
    ],
    [
      'Kong Manager on',
      "the Admin API listens only inside Kong's network namespace, without Kong Manager",
      (d) => {
        d.kongConf.set('admin_gui_listen', '0.0.0.0:8002');
      },
    ],
    [
      'admin TLS listener added',
      "the Admin API listens only inside Kong's network namespace, without Kong Manager",
      (d) => {
        d.kongConf.set('admin_listen', '127.0.0.1:8001, 0.0.0.0:8444 ssl');
      },
    ],
    [
      'decK over a network',
      "the Admin API listens only inside Kong's network namespace, without Kong Manager",
      (d) => {
        delete d.compose.services['deck-sync'].network_mode;
        d.compose.services['deck-sync'].networks = ['service-net'];
      },
    ],
    [
      'Kong on the database network',
      'each container is on the networks it needs and no other',
      (d) => {
        d.compose.services.kong.networks.push('db-net');
      },
    ],
    [
      'service next to Redis',
      'each container is on the networks it needs and no other',
      (d) => {
        d.compose.services['jobs-service-1'].networks.push('redis-net');
      },
    ],
    [
      'decK latest',
      'decK is pinned to a release',
      (d) => {
        d.compose.services['deck-sync'].image = 'kong/deck:latest';
      },
    ],
    [
      'decK default latest',
      'decK is pinned to a release',
      (d) => {
        d.compose.services['deck-sync-demo'].image = 'kong/deck:${DECK_TAG:-latest}';
      },
    ],
    [
      'bootstrap only',
      'Kong migrations: bootstrap and up before Kong starts, finish once it is ready',
      (d) => {
        d.compose.services['kong-migrations'].command = ['kong', 'migrations', 'bootstrap'];
      },
    ],
    [
      'finish too early',
      'Kong migrations: bootstrap and up before Kong starts, finish once it is ready',
      (d) => {
        d.compose.services['kong-migrations'].command = [
          'sh',
          '-c',
          'kong migrations bootstrap && kong migrations up && kong migrations finish',
        ];
      },
    ],
    [
      'no finish',
      'Kong migrations: bootstrap and up before Kong starts, finish once it is ready',
      (d) => {
        delete d.compose.services['kong-migrations-finish'];
      },
    ],
    [
      'health back to kong health',
      "Kong's health is /status/ready on its status listener",
      (d) => {
        d.compose.services.kong.healthcheck = { test: ['CMD', 'kong', 'health'] };
      },
    ],
    [
      'status listener moved',
      "Kong's health is /status/ready on its status listener",
      (d) => {
        d.kongConf.set('status_listen', '0.0.0.0:8007');
      },
    ],
    [
      'back to mysql:8.4',
      'the jobs database is MariaDB 10.11',
      (d) => {
        d.compose.services.mariadb.image = 'mysql:8.4';
      },
    ],
    [
      'rate limits to another host',
      'rate-limit counters live in the compose Redis, its password only in the environment',
      (d) => {
        d.kongYaml.services[0].routes[0].plugins.find((p: Parsed) => p.name === 'job-rate-limits').config.redis.host =
          'cache';
      },
    ],
    [
      'a default Redis password',
      'rate-limit counters live in the compose Redis, its password only in the environment',
      (d) => {
        d.compose.services.kong.environment.JOBS_REDIS_PASSWORD = '${REDIS_PASSWORD:-redis}';
      },
    ],
    [
      'demo.yaml in the production sync',
      'the demo is a profile: production syncs never load demo.yaml',
      (d) => {
        d.compose.services['deck-sync'].command = [
          'deck gateway sync /deck/kong.yaml && deck gateway sync /deck/demo.yaml',
        ];
      },
    ],
    [
      'demo seed without the profile',
      'the demo is a profile: production syncs never load demo.yaml',
      (d) => {
        delete d.compose.services['demo-seed'].profiles;
      },
    ],
    [
      'service told to seed',
      'the service image never seeds demo data and holds no local gateway',
      (d) => {
        d.compose.services['jobs-service-1'].environment.SEED_DEMO_DATA = 'true';
      },
    ],
    [
      'local gateway copied into the image',
      'the service image never seeds demo data and holds no local gateway',
      (d) => {
        d.serviceDockerfile = d.serviceDockerfile.replace(
          'COPY db ./db',
          'COPY db ./db\nCOPY gateway/local ./gateway/local',
        );
      },
    ],
    [
      'local gateway no longer ignored',
      'the service image never seeds demo data and holds no local gateway',
      (d) => {
        d.dockerignore = d.dockerignore.filter((l) => l !== 'gateway/local');
      },
    ],
    [
      'stock entrypoint',
      'every line Kong writes goes through the key redaction filter',
      (d) => {
        d.kongDockerfile = d.kongDockerfile.replace(
          'ENTRYPOINT ["/usr/local/bin/jobs-kong-entrypoint"]',
          'ENTRYPOINT ["/docker-entrypoint.sh"]',
        );
      },
    ],
    [
      'error log to a file',
      'every line Kong writes goes through the key redaction filter',
      (d) => {
        d.kongConf.set('proxy_error_log', 'logs/error.log');
      },
    ],
    [
      'compose bypasses the wrapper',
      'every line Kong writes goes through the key redaction filter',
      (d) => {
        d.compose.services.kong.entrypoint = ['/docker-entrypoint.sh'];
      },
    ],
    [
      "Kong's default access log format",
      'access logs use jobs_safe, which never writes a query string or a key header',
      (d) => {
        d.kongConf.set('proxy_access_log', '/dev/stdout');
      },
    ],
    [
      'an access log buffer larger than a FIFO writes whole',
      'access logs use jobs_safe, which never writes a query string or a key header',
      (d) => {
        d.kongConf.set('proxy_access_log', '/dev/stdout jobs_safe buffer=64k flush=1s');
      },
    ],
    [
      '$request in the format',
      'access logs use jobs_safe, which never writes a query string or a key header',
      (d) => {
        d.logInclude = d.logInclude.replace('"path":"$jobs_log_path"', '"path":"$request"');
      },
    ],
    [
      'the key header in the format',
      'access logs use jobs_safe, which never writes a query string or a key header',
      (d) => {
        d.logInclude = d.logInclude.replace('"user_agent":"$http_user_agent"', '"key":"$http_x_api_key"');
      },
    ],
    [
      'include not shipped',
      'access logs use jobs_safe, which never writes a query string or a key header',
      (d) => {
        d.kongConf.set('nginx_http_include', '/etc/nginx/jobs.conf');
      },
    ],
    [
      'request id dropped from the log',
      'the access log records the request id that Kong error bodies quote',
      (d) => {
        d.logInclude = d.logInclude.replace('"request_id":"$kong_request_id",', '');
      },
    ],
    [
      'request id header off',
      'the access log records the request id that Kong error bodies quote',
      (d) => {
        d.kongConf.set('headers', 'off');
      },
    ],
    [
      'request id not proxied',
      "X-Request-ID (the client's, else $kong_request_id) reaches the service and every answer, set by nginx",
      (d) => {
        d.kongConf.delete('nginx_location_proxy_set_header');
      },
    ],
    [
      'request id only on successes',
      "X-Request-ID (the client's, else $kong_request_id) reaches the service and every answer, set by nginx",
      (d) => {
        d.proxyInclude = d.proxyInclude.replace(
          "more_set_headers 'X-Request-ID",
          "more_set_headers -s 200 'X-Request-ID",
        );
      },
    ],
    [
      'auth-guard not loaded',
      'Kong loads every plugin of ours',
      (d) => {
        d.kongConf.set('plugins', 'bundled,job-scopes');
      },
    ],
    [
      'auth-guard not copied',
      'Kong loads every plugin of ours',
      (d) => {
        d.kongDockerfile = d.kongDockerfile.replace(/COPY gateway\/plugins\/auth-guard\/[^\n]*\n/, '');
      },
    ],
  ];

  mutationsCaught(invariants, load, mutations);
});

describe("the Kong container's health check (gateway/kong/ready.sh)", () => {
  /** Runs ready.sh against a stand-in status API answering `status` on /status/ready. */
  async function check(status: number | null): Promise<number | null> {
    const server = http.createServer((req, res) => {
      res.writeHead(req.url === '/status/ready' && status !== null ? status : 404, {
        'Content-Type': 'application/json',
      });
      res.end(JSON.stringify({ message: status === 200 ? 'ready' : 'not ready' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    if (status === null) await new Promise<void>((resolve) => server.close(() => resolve()));
    try {
      // Asynchronously: the stand-in server answers from this same process.
      const child = spawn('bash', [join(ROOT, 'gateway/kong/ready.sh')], {
        env: { ...process.env, KONG_READY_PORT: String(port) },
        stdio: 'ignore',
      });
      return await new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    } finally {
      if (status !== null) await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  it('is healthy when /status/ready answers 200', async () => {
    expect(await check(200)).toBe(0);
  });

  it('is unhealthy when Kong is up but not ready (503)', async () => {
    expect(await check(503)).toBe(1);
  });

  it('is unhealthy when nothing listens', async () => {
    expect(await check(null)).toBe(1);
  });
});
