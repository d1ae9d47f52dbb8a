-- Issue 24: how each client's ID tokens are signed (RS256, ES256 or EdDSA).
ALTER TABLE `clients` ADD `id_token_alg` text DEFAULT 'RS256' NOT NULL;
