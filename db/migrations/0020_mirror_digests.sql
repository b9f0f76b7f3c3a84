CREATE TABLE `job_digest_buckets` (
	`bucket` smallint unsigned NOT NULL,
	`digest` bigint unsigned NOT NULL,
	`n` int NOT NULL,
	CONSTRAINT `job_digest_buckets_bucket` PRIMARY KEY(`bucket`)
);
--> statement-breakpoint
CREATE TABLE `job_digest_builds` (
	`id` tinyint NOT NULL,
	`table_created` varchar(32) NOT NULL,
	CONSTRAINT `job_digest_builds_id` PRIMARY KEY(`id`)
);
--> statement-breakpoint
CREATE TABLE `job_digests` (
	`job_id` binary(16) NOT NULL,
	`bucket` smallint unsigned NOT NULL,
	`digest` bigint unsigned NOT NULL,
	CONSTRAINT `job_digests_job_id` PRIMARY KEY(`job_id`)
);
--> statement-breakpoint
CREATE INDEX `job_digests_bucket_idx` ON `job_digests` (`bucket`,`job_id`);