CREATE TABLE `idempotency_keys` (
	`consumer_id` varchar(64) NOT NULL,
	`idempotency_key` varchar(255) NOT NULL,
	`request_hash` char(64) NOT NULL,
	`response_status` smallint,
	`response_location` varchar(200),
	`response_body` mediumtext,
	`created_at` datetime(3) NOT NULL,
	`expires_at` datetime(3) NOT NULL,
	CONSTRAINT `idempotency_keys_consumer_id_idempotency_key_pk` PRIMARY KEY(`consumer_id`,`idempotency_key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_expires_idx` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
-- Keys are compared exactly ("abc" is not "ABC"), whatever the database's default collation.
ALTER TABLE `idempotency_keys` CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
