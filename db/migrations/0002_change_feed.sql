CREATE TABLE `job_change_sequence` (
	`id` tinyint NOT NULL,
	`last_seq` bigint unsigned NOT NULL DEFAULT 0,
	CONSTRAINT `job_change_sequence_id` PRIMARY KEY(`id`)
);
--> statement-breakpoint
CREATE TABLE `job_changes` (
	`job_id` binary(16) NOT NULL,
	`seq` bigint unsigned,
	`ever_public` boolean NOT NULL DEFAULT false,
	CONSTRAINT `job_changes_job_id` PRIMARY KEY(`job_id`),
	CONSTRAINT `job_changes_seq_idx` UNIQUE(`seq`)
);
--> statement-breakpoint
CREATE TABLE `service_secrets` (
	`name` varchar(32) NOT NULL,
	`secret` varbinary(64) NOT NULL,
	CONSTRAINT `service_secrets_name` PRIMARY KEY(`name`)
);
--> statement-breakpoint
CREATE INDEX `job_changes_feed_idx` ON `job_changes` (`ever_public`,`seq`);