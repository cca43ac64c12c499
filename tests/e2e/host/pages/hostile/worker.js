fetch(self.location.hash ? 'http://127.0.0.1:' + self.location.hash.slice(1) + '/worker' : '/');
