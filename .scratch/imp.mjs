const t0 = performance.now();
const mark = (l) => console.log(l, Math.round(performance.now() - t0));
await import('koffi'); mark('koffi');
await import('/work/wt-harden-b/dist/hdf5/lib.js'); mark('lib');
await import('/work/wt-harden-b/dist/hdf5/vfd.js'); mark('vfd');
await import('/work/wt-harden-b/dist/store/store.js'); mark('store');
await import('/work/wt-harden-b/dist/app.js'); mark('app');
await import('/work/wt-harden-b/dist/main.js'); mark('main');
await import('pino'); mark('pino');
