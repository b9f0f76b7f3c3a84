CREATE TABLE `job_day_counts` (
	`day` date NOT NULL,
	`status` enum('draft','active','open','paused','closed') NOT NULL,
	`slot` bigint unsigned NOT NULL DEFAULT 0,
	`n` bigint NOT NULL,
	CONSTRAINT `job_day_counts_day_status_slot_pk` PRIMARY KEY(`day`,`status`,`slot`)
);
--> statement-breakpoint
CREATE INDEX `job_day_counts_slot_idx` ON `job_day_counts` (`slot`);