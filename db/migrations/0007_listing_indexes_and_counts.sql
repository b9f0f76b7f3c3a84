CREATE TABLE `job_counts` (
	`by_department` boolean NOT NULL,
	`department_key` varchar(100) NOT NULL,
	`status` enum('draft','active','open','paused','closed') NOT NULL,
	`type` enum('full-time','part-time','contract','contract-to-hire','direct-hire','managed-teams') NOT NULL,
	`workplace` enum('none','on-site','hybrid','remote') NOT NULL,
	`n` bigint NOT NULL,
	CONSTRAINT `job_counts_by_department_department_key_status_type_workplace_pk` PRIMARY KEY(`by_department`,`department_key`,`status`,`type`,`workplace`)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
--> statement-breakpoint
-- Edited after generating: the eleven new indexes in one ALTER TABLE, so a large table is read once
-- to build them all instead of once per index. department_key in job_counts compares exactly as
-- jobs.department_key does (binary collation, see 0001).
ALTER TABLE `jobs`
	ADD INDEX `jobs_listed_type_workplace_idx` (`listed`,`type`,`workplace`,`created_at`,`id`),
	ADD INDEX `jobs_listed_department_type_idx` (`listed`,`department_key`,`type`,`created_at`,`id`),
	ADD INDEX `jobs_listed_department_workplace_idx` (`listed`,`department_key`,`workplace`,`created_at`,`id`),
	ADD INDEX `jobs_listed_department_type_workplace_idx` (`listed`,`department_key`,`type`,`workplace`,`created_at`,`id`),
	ADD INDEX `jobs_status_type_idx` (`visible_status`,`type`,`created_at`,`id`),
	ADD INDEX `jobs_status_department_idx` (`visible_status`,`department_key`,`created_at`,`id`),
	ADD INDEX `jobs_status_workplace_idx` (`visible_status`,`workplace`,`created_at`,`id`),
	ADD INDEX `jobs_status_type_workplace_idx` (`visible_status`,`type`,`workplace`,`created_at`,`id`),
	ADD INDEX `jobs_status_department_type_idx` (`visible_status`,`department_key`,`type`,`created_at`,`id`),
	ADD INDEX `jobs_status_department_workplace_idx` (`visible_status`,`department_key`,`workplace`,`created_at`,`id`),
	ADD INDEX `jobs_status_department_type_workplace_idx` (`visible_status`,`department_key`,`type`,`workplace`,`created_at`,`id`);
