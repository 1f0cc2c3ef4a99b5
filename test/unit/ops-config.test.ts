/** Settings of the operations work: mounts, S3 settings from AWS_* variables, metrics access; key encoding for ROS3 URLs. */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { encodeKey, parseMountSpec, parseMountSpecs } from '../../src/store/mounts/mountspec.js';
import { tempRoot } from '../helpers/server.js';

describe('mount specs', () => {
  it('parses /path=s3://bucket/prefix into a normalised mount point, bucket and prefix', () => {
    const table: [string, ReturnType<typeof parseMountSpec>][] = [
      ['/archive=s3://bucket/prefix', { at: '/archive', bucket: 'bucket', prefix: 'prefix/' }],
      ['/archive/=s3://bucket/a/b/', { at: '/archive', bucket: 'bucket', prefix: 'a/b/' }],
      ['/a//b=s3://my.bucket-1', { at: '/a/b', bucket: 'my.bucket-1', prefix: '' }],
      ['/x=s3://bk1/', { at: '/x', bucket: 'bk1', prefix: '' }],
    ];
    for (const [spec, exp] of table) expect(parseMountSpec(spec), spec).to.deep.equal(exp);
  });
  it('rejects malformed entries, the top folder and overlapping mounts, naming them', () => {
    for (const bad of ['archive=s3://b/p', '/archive', '/a=http://b/p', '/a=s3://', '/../x=s3://b/p', '/a=s3://b!x/p', '/a=s3://ab/p']) {
      expect(() => parseMountSpecs([bad]), bad).to.throw(/Invalid mount|bucket|top folder/);
    }
    expect(() => parseMountSpecs(['/a=s3://bk1/p', '/a/b=s3://bk2/q'])).to.throw(/overlap/);
    expect(parseMountSpecs(['/a=s3://bk1/p', '/ab=s3://bk2/q'])).to.have.length(2);
  });
});

describe('S3 settings', () => {
  it('takes mounts from flags (list) or H5STORE_MOUNTS (comma-separated), and fails on a bad one', () => {
    expect(loadConfig({ mounts: ['/a=s3://bkt/p'] }, {}).mounts).to.deep.equal(['/a=s3://bkt/p']);
    expect(loadConfig({}, { H5STORE_MOUNTS: '/a=s3://bkt/p, /c=s3://dkt' }).mounts).to.deep.equal(['/a=s3://bkt/p', '/c=s3://dkt']);
    expect(() => loadConfig({}, { H5STORE_MOUNTS: 'nope' })).to.throw(/mounts: Invalid mount/);
  });
  it('reads region, keys and endpoint from the standard AWS_* variables; H5STORE_S3_* and flags win; the file is last', () => {
    const file = path.join(tempRoot('h5store-cfg-'), 'c.json');
    fs.writeFileSync(file, JSON.stringify({ s3Region: 'eu-west-3', s3AccessKeyId: 'FILEKEY', s3SecretAccessKey: 'FILESECRET' }));
    const fromFile = loadConfig({ config: file }, {});
    expect([fromFile.s3Region, fromFile.s3AccessKeyId, fromFile.s3SecretAccessKey]).to.deep.equal(['eu-west-3', 'FILEKEY', 'FILESECRET']);
    const env = { AWS_ACCESS_KEY_ID: 'ENVKEY', AWS_SECRET_ACCESS_KEY: 'ENVSECRET', AWS_DEFAULT_REGION: 'us-west-2', AWS_ENDPOINT_URL: 'http://127.0.0.1:9000' };
    const c = loadConfig({ config: file }, env);
    expect([c.s3Region, c.s3AccessKeyId, c.s3SecretAccessKey, c.s3Endpoint]).to.deep.equal(['us-west-2', 'ENVKEY', 'ENVSECRET', 'http://127.0.0.1:9000']);
    expect(loadConfig({}, { ...env, AWS_REGION: 'ap-south-1' }).s3Region, 'AWS_REGION before AWS_DEFAULT_REGION').to.equal('ap-south-1');
    expect(loadConfig({ s3Endpoint: 'http://flag:1' }, { ...env, H5STORE_S3_ENDPOINT: 'http://h5store:2' }).s3Endpoint).to.equal('http://flag:1');
    expect(loadConfig({}, { ...env, H5STORE_S3_ENDPOINT: 'http://h5store:2' }).s3Endpoint).to.equal('http://h5store:2');
    expect(loadConfig({}, { AWS_ENDPOINT_URL_S3: 'http://s3only:1', AWS_ENDPOINT_URL: 'http://all:1' }).s3Endpoint).to.equal('http://s3only:1');
    expect(loadConfig({}, {}).s3Region).to.equal('us-east-1');
  });
  it('validates metrics settings', () => {
    expect(loadConfig({}, {}).metricsAccess).to.equal('public');
    expect(loadConfig({}, { H5STORE_METRICS_ACCESS: 'user' }).metricsAccess).to.equal('user');
    expect(() => loadConfig({ metricsAccess: 'everyone' }, {})).to.throw(/metricsAccess/);
    expect(loadConfig({}, { H5STORE_METRICS_PORT: '9464' }).metricsPort).to.equal(9464);
    expect(() => loadConfig({ metricsPort: 70000 }, {})).to.throw(/metricsPort/);
  });
});

describe('S3 key encoding for signed ROS3 URLs', () => {
  it('percent-encodes everything but unreserved characters and slashes (AWS SigV4)', () => {
    const table: [string, string][] = [
      ['a/b.h5', 'a/b.h5'],
      ['with space.h5', 'with%20space.h5'],
      ["x/(1)!*'.h5", 'x/%281%29%21%2A%27.h5'],
      ['ü/é.h5', '%C3%BC/%C3%A9.h5'],
      ['a+b=c&d.h5', 'a%2Bb%3Dc%26d.h5'],
      ['-_.~', '-_.~'],
    ];
    for (const [k, exp] of table) expect(encodeKey(k), k).to.equal(exp);
  });
});
