// A test extension: exposes what tests need and nothing else.
window.probe = {
  call: (connection, operation, args) => window.helm.call(connection, operation, args),
  many: (n, connection, operation) => Promise.all(Array.from({ length: n }, (_, i) => window.helm.call(connection, operation, { i: i }))),
};
