// The JavaScript client's basic flows against mini-k8s, driven by tests/compat/test_js_client.py.
// Usage: node flows.mjs KUBECONFIG NAMESPACE. Prints one JSON line per step; the test checks them.
import * as k8s from '@kubernetes/client-node';

const [kubeconfig, ns] = process.argv.slice(2);
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
const report = (step, value) => console.log(JSON.stringify({ step, value }));

await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'a', labels: { app: 'x' } }, data: { k: 'v' } } });
await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'b' }, data: { k: 'w' } } });
const listed = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app=x' });
report('list', listed.items.map((cm) => cm.metadata.name));
report('get', (await core.readNamespacedConfigMap({ name: 'a', namespace: ns })).data);

// A watch from the list's resourceVersion: the first event is the delete that follows.
const seen = new Promise((resolve, reject) => {
  new k8s.Watch(kc).watch(`/api/v1/namespaces/${ns}/configmaps`, { resourceVersion: listed.metadata.resourceVersion },
    (type, obj) => resolve([type, obj.metadata.name]), (err) => err && reject(err));
});
await core.deleteNamespacedConfigMap({ name: 'b', namespace: ns });
report('watch', await seen);

const apply = (manager, data, force) => objects.patch(
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace: ns }, data },
  undefined, undefined, manager, force, k8s.PatchStrategy.ServerSideApply);
const created = await apply('js-student', { a: '1' });
report('apply', created.metadata.managedFields.map((m) => [m.manager, m.operation]));
try {
  await apply('js-other', { a: '2' });
  report('conflict', null);
} catch (err) {
  const status = JSON.parse(err.body);
  report('conflict', [err.code, status.reason, status.message]);
}
const forced = await apply('js-other', { a: '2' }, true);
report('force', [forced.data, forced.metadata.managedFields.map((m) => m.manager)]);
process.exit(0);
