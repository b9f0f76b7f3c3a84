-- Edited after generating: one ALTER TABLE, so the table never exists without a primary key (the
-- 0008 triggers' upserts would add duplicate rows) nor with a key naming a missing column. Rows
-- already there become slot 0, the folded counts; 0010 moves the triggers onto slots.
ALTER TABLE `job_counts`
	ADD `slot` bigint unsigned DEFAULT 0 NOT NULL,
	DROP PRIMARY KEY,
	ADD PRIMARY KEY(`by_department`,`department_key`,`status`,`type`,`workplace`,`slot`),
	ADD INDEX `job_counts_slot_idx` (`slot`);
