/**
 * The deployment files agree with what is tested (Docker and Kubernetes cannot run here):
 * - the Dockerfile installs exactly the runtime Debian packages of .ci/run, of
 *   scripts/ensure-deps.mjs (`npm start`) and of the README, on Debian 12 with Node 20, runs the
 *   README's steps (`npm ci`, `npm run build`, `node dist/cli.js serve`) as a non-root user with
 *   /data as a volume, and its HEALTHCHECK command works against a real server;
 * - the Kubernetes manifests probe /healthz and /readyz on the served port, run as the image's
 *   user, mount a ReadWriteMany volume, set only real settings, and hash on the key that the
 *   controller snippet defines with the very maps of the (tested) nginx config.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ConfigSchema, envName } from '../../src/config.js';
import { freePort } from '../helpers/balancer.js';
import { REPO, startServer } from '../helpers/server.js';

const read = (p: string) => fs.readFileSync(path.join(REPO, p), 'utf8');

/** Packages named by `apt-get install` lines (continuations joined), minus options. */
function aptPackages(text: string): string[] {
  const joined = text.replace(/\\\n/g, ' ');
  const out: string[] = [];
  for (const m of joined.matchAll(/apt-get install ([^\n&;>|]*)/g)) {
    for (const w of m[1].split(/\s+/)) if (w && !w.startsWith('-')) out.push(w);
  }
  return out;
}

/** Packages only the tests need (CI installs them, the image does not). */
const TEST_ONLY = new Set(['chromium', 'fonts-dejavu-core', 'hdf5-tools', 'python3-h5py', 'python3-numpy', 'python3-requests', 'python3-requests-unixsocket', 'python3-tz', 'python3-packaging', 'python3-fsspec', 'python3-aiohttp', 'python3-xarray', 'python3-h5netcdf', 'python3-tables', 'python3-zstandard', 'python3-lz4', 'fatrace', 'ceph-mon', 'ceph-osd', 'radosgw', 'nginx', 'haproxy']);

/** Packages that build the bitshuffle plugin (`BUILD` of scripts/build-plugins.mjs: .ci/run installs them, the image's plugin stage runs the script, which does). */
const BUILD_ONLY = new Set(/export const BUILD = \[([^\]]*)\]/.exec(fs.readFileSync(path.join(REPO, 'scripts/build-plugins.mjs'), 'utf8'))![1].match(/'([^']+)'/g)!.map((s) => s.slice(1, -1)));

describe('Dockerfile', () => {
  const docker = read('Dockerfile');
  const instructions = docker
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

  it('is Debian 12 slim with Node 20 (the official node image) in every stage', () => {
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    expect(froms.length).to.be.at.least(1);
    for (const f of froms) expect(f).to.match(/^FROM node:20-bookworm-slim( AS \w+)?$/);
  });

  it('installs the runtime packages of .ci/run, scripts/ensure-deps.mjs and the README, and no others', () => {
    const image = aptPackages(docker).sort();
    const ci = aptPackages(read('.ci/run'));
    const ciRuntime = ci.filter((p) => !TEST_ONLY.has(p) && !BUILD_ONLY.has(p)).sort();
    for (const p of BUILD_ONLY) expect(ci, `.ci/run installs the plugin build package ${p}`).to.include(p);
    expect(image, 'Dockerfile vs .ci/run (runtime part)').to.deep.equal(ciRuntime);
    const ensure = /const RUNTIME = \[([^\]]*)\]/.exec(read('scripts/ensure-deps.mjs'))![1].match(/'([^']+)'/g)!.map((s) => s.slice(1, -1)).sort();
    expect(image, 'Dockerfile vs scripts/ensure-deps.mjs RUNTIME (npm start)').to.deep.equal(ensure);
    const readme = read('README.md');
    const line = /same Debian packages as\s+`npm start`: `([^`]+)`/.exec(readme);
    expect(line, 'the README names the image packages').to.not.equal(null);
    expect(line![1].split(/\s+/).sort(), 'Dockerfile vs README').to.deep.equal(image);
    for (const p of ci) expect(TEST_ONLY.has(p) || BUILD_ONLY.has(p) || image.includes(p), `${p} from .ci/run`).to.equal(true);
  });

  it('builds the bitshuffle plugin in a stage of its own with scripts/build-plugins.mjs and copies only the plugin folder to where the server looks (build/hdf5-plugins beside dist/)', () => {
    expect(instructions).to.include('FROM node:20-bookworm-slim AS plugins');
    expect(instructions).to.include('RUN node scripts/build-plugins.mjs');
    expect(instructions).to.include('COPY --from=plugins /app/build/hdf5-plugins ./build/hdf5-plugins');
    expect(read('.ci/run')).to.match(/^node scripts\/build-plugins\.mjs$/m);
    expect(read('scripts/ensure-deps.mjs')).to.include("'build-plugins.mjs'");
  });

  it("runs the README's steps: npm ci, npm run build, node dist/cli.js serve", () => {
    const readme = read('README.md');
    expect(readme).to.include('npm run build');
    expect(readme).to.match(/node dist\/cli\.js serve/);
    expect(readme, 'the README says what the image runs').to.match(/runs `npm ci`, `npm run build` and `node dist\/cli\.js serve`/);
    const runs = instructions.filter((l) => l.startsWith('RUN ')).join('\n');
    expect(runs).to.match(/npm ci --no-audit --no-fund/);
    expect(runs).to.match(/npm run build/);
    expect(runs).to.match(/npm ci --omit=dev/);
    expect(instructions).to.include('CMD ["node", "dist/cli.js", "serve"]');
    // npm run build writes dist/cli.js from src/cli.ts
    expect(JSON.parse(read('tsconfig.json')).compilerOptions.outDir).to.equal('dist');
    const scripts = JSON.parse(read('package.json')).scripts;
    expect(scripts.build).to.equal('npm run build:server && npm run build:viewer');
    expect(scripts['build:server']).to.equal('node scripts/build-server.mjs');
    expect(read('scripts/build-server.mjs')).to.include("'-p', path.join(root, 'tsconfig.json')");
    expect(runs, 'the viewer sources are in the build stage').to.match(/npm run build/);
    expect(instructions).to.include.members(['COPY scripts ./scripts', 'COPY viewer ./viewer']);
  });

  it('runs as a non-root user, serves /data as a volume on 0.0.0.0:5101, with real settings', () => {
    const user = instructions.filter((l) => l.startsWith('USER ')).pop();
    expect(user).to.equal('USER node');
    expect(instructions).to.include('VOLUME /data');
    expect(instructions).to.include('EXPOSE 5101');
    const env = instructions.filter((l) => l.startsWith('ENV ')).join(' ');
    expect(env).to.include('H5STORE_ROOT=/data');
    expect(env).to.include('H5STORE_HOST=0.0.0.0');
    expect(env).to.include('H5STORE_PORT=5101');
    const known = new Set(Object.keys(ConfigSchema.shape).map(envName));
    for (const m of env.matchAll(/(H5STORE_\w+)=/g)) expect(known.has(m[1]) || m[1] === 'H5STORE_BUILD_COMMIT', m[1]).to.equal(true);
    expect(docker).to.match(/chown node:node \/data/);
  });

  it('its HEALTHCHECK command passes against a running server and fails when nothing answers', async function () {
    this.timeout(30000);
    const hc = instructions.find((l) => l.startsWith('HEALTHCHECK '))!;
    expect(hc).to.match(/\/healthz/);
    const cmd = JSON.parse(/CMD (\[.*\])$/.exec(hc)![1]) as string[];
    expect(cmd[0]).to.equal('node');
    const srv = await startServer();
    try {
      const port = new URL(srv.url).port;
      const ok = spawnSync(process.execPath, cmd.slice(1), { env: { ...process.env, H5STORE_PORT: port }, timeout: 10000 });
      expect(ok.status, ok.stderr?.toString()).to.equal(0);
      const dead = spawnSync(process.execPath, cmd.slice(1), { env: { ...process.env, H5STORE_PORT: String(await freePort()) }, timeout: 10000 });
      expect(dead.status).to.equal(1);
    } finally {
      await srv.stop();
      fs.rmSync(srv.root, { recursive: true, force: true });
    }
  });

  it('docs/deploy.md runs the image the Dockerfile builds', () => {
    const doc = read('docs/deploy.md');
    const runs = [...doc.replace(/\\\n\s*/g, ' ').matchAll(/docker run [^\n]*/g)].map((m) => m[0]);
    expect(runs.length).to.be.at.least(4);
    for (const r of runs) {
      expect(r, r).to.include('h5store:0.1.0');
      if (r.includes(':/data')) expect(r).to.match(/-v \S+:\/data/);
    }
    expect(doc).to.include('docker build -t h5store:0.1.0');
    expect(JSON.parse(read('package.json')).version).to.equal('0.1.0');
  });
});

describe('Kubernetes manifests', () => {
  const docs = parseAllDocuments(read('deploy/kubernetes/h5store.yaml')).map((d) => d.toJS());
  const byKind = (k: string) => docs.find((d) => d.kind === k);

  it('Deployment: probes on /healthz and /readyz, the image user, a ReadWriteMany volume at /data, real settings', () => {
    const dep = byKind('Deployment');
    const pod = dep.spec.template.spec;
    const c = pod.containers[0];
    const port = c.ports.find((p: any) => p.name === 'http');
    expect(port.containerPort).to.equal(5101);
    expect(c.livenessProbe.httpGet).to.deep.equal({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe.httpGet).to.deep.equal({ path: '/readyz', port: 'http' });
    expect(pod.securityContext.runAsNonRoot).to.equal(true);
    expect(pod.securityContext.runAsUser, "the image's node user").to.equal(1000);
    const env = Object.fromEntries(c.env.map((e: any) => [e.name, e.value]));
    expect(env.H5STORE_PORT).to.equal(String(port.containerPort));
    expect(env.H5STORE_ROOT).to.equal('/data');
    const known = new Set(Object.keys(ConfigSchema.shape).map(envName));
    for (const k of Object.keys(env)) expect(known.has(k), k).to.equal(true);
    expect(ConfigSchema.safeParse({ root: env.H5STORE_ROOT, host: env.H5STORE_HOST, port: env.H5STORE_PORT, endpoint: env.H5STORE_ENDPOINT }).success).to.equal(true);
    const mount = c.volumeMounts.find((m: any) => m.mountPath === '/data');
    const vol = pod.volumes.find((v: any) => v.name === mount.name);
    const pvc = byKind('PersistentVolumeClaim');
    expect(vol.persistentVolumeClaim.claimName).to.equal(pvc.metadata.name);
    expect(pvc.spec.accessModes).to.deep.equal(['ReadWriteMany']);
    expect(dep.spec.replicas).to.be.at.least(2);
    const ann = dep.spec.template.metadata.annotations;
    expect(ann['prometheus.io/path']).to.equal('/metrics');
    expect(ann['prometheus.io/port']).to.equal(String(port.containerPort));
  });

  it('Service and Ingress reach the pods; ingress-nginx hashes on the key the controller snippet defines', () => {
    const dep = byKind('Deployment');
    const svc = byKind('Service');
    const ing = byKind('Ingress');
    expect(svc.spec.selector).to.deep.equal(dep.spec.selector.matchLabels);
    expect(svc.spec.ports[0].targetPort).to.equal('http');
    const backend = ing.spec.rules[0].http.paths[0].backend.service;
    expect(backend.name).to.equal(svc.metadata.name);
    expect(backend.port.name).to.equal(svc.spec.ports[0].name);
    expect(ing.metadata.annotations['nginx.ingress.kubernetes.io/upstream-hash-by']).to.equal('$h5store_domain_key');
    expect(ing.metadata.annotations['nginx.ingress.kubernetes.io/proxy-buffering']).to.equal('off');
    const cm = parseAllDocuments(read('deploy/kubernetes/ingress-nginx-controller-configmap.yaml'))[0].toJS();
    const nginx = read('deploy/nginx/h5store.conf');
    const section = /# --- domain key[^\n]*\n([\s\S]*?)# --- end domain key ---/.exec(nginx)![1];
    expect(cm.data['http-snippet'].trim(), 'the same maps as deploy/nginx/h5store.conf').to.equal(section.trim());
    expect(section).to.include('$h5store_domain_key');
  });
});
