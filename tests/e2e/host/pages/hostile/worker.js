fetch(self.location.hash ? decodeURIComponent(self.location.hash.slice(1)) + '/worker' : '/');
