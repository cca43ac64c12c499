{
  "algorithm": "ed25519",
  "key_id": "8983c687fb273541",
  "signature": "h/Rybk0JtjX1Izr5lgpAByZEK5ei70LEyds3BQS2895qwkOwBbT2OM0Czys/t1qAD9rMcGpUXH/VRdycxuE1Bg=="
}
