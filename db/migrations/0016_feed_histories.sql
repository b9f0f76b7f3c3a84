CREATE TABLE `job_change_histories` (
	`id` int unsigned AUTO_INCREMENT NOT NULL,
	`history` char(16) NOT NULL,
	`first_seq` bigint unsigned NOT NULL,
	`table_created` varchar(32) NOT NULL,
	CONSTRAINT `job_change_histories_id` PRIMARY KEY(`id`),
	CONSTRAINT `job_change_histories_history_idx` UNIQUE(`history`)
);
--> statement-breakpoint
-- Positions handed out before they named a history belong to FIRST_HISTORY (domain/feed.ts), up to the feed's head now.
INSERT INTO `job_change_histories` (`history`, `first_seq`, `table_created`) VALUES ('0000000000000000', 0, '');--> statement-breakpoint
INSERT INTO `job_change_histories` (`history`, `first_seq`, `table_created`)
  SELECT lower(hex(random_bytes(8))), s.`last_seq` + 1, coalesce(cast(t.`CREATE_TIME` AS char), '')
  FROM `job_change_sequence` s, information_schema.`TABLES` t
  WHERE s.`id` = 1 AND t.`TABLE_SCHEMA` = database() AND t.`TABLE_NAME` = 'job_change_histories';
