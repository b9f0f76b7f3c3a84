-- Custom migration: the change-feed triggers stamp changed_at with UTC_TIMESTAMP(6), the writing
-- statement's start time in UTC whatever the writer's session time zone (NOW(6) was local to it,
-- and event times are read as UTC). Replication-safe as NOW(6) is. Triggers otherwise unchanged.
DROP TRIGGER `jobs_change_on_insert`;
--> statement-breakpoint
CREATE TRIGGER `jobs_change_on_insert` AFTER INSERT ON `jobs` FOR EACH ROW
  INSERT INTO `job_changes` (`job_id`, `seq`, `changed_at`, `ever_public`)
  VALUES (NEW.`id`, NULL, UTC_TIMESTAMP(6), NEW.`status` <> 'draft' AND NEW.`deleted_at` IS NULL)
  ON DUPLICATE KEY UPDATE `seq` = NULL, `changed_at` = UTC_TIMESTAMP(6),
    `ever_public` = `ever_public` OR (NEW.`status` <> 'draft' AND NEW.`deleted_at` IS NULL);
--> statement-breakpoint
DROP TRIGGER `jobs_change_on_update`;
--> statement-breakpoint
CREATE TRIGGER `jobs_change_on_update` AFTER UPDATE ON `jobs` FOR EACH ROW
BEGIN
  INSERT INTO `job_changes` (`job_id`, `seq`, `changed_at`, `ever_public`)
  VALUES (NEW.`id`, NULL, UTC_TIMESTAMP(6), NEW.`status` <> 'draft' AND NEW.`deleted_at` IS NULL)
  ON DUPLICATE KEY UPDATE `seq` = NULL, `changed_at` = UTC_TIMESTAMP(6),
    `ever_public` = `ever_public` OR (NEW.`status` <> 'draft' AND NEW.`deleted_at` IS NULL);
  -- An id rewritten in place: the old id is gone for partners.
  IF OLD.`id` <> NEW.`id` THEN
    UPDATE `job_changes` SET `seq` = NULL, `changed_at` = UTC_TIMESTAMP(6) WHERE `job_id` = OLD.`id`;
  END IF;
END;
--> statement-breakpoint
DROP TRIGGER `jobs_change_on_delete`;
--> statement-breakpoint
CREATE TRIGGER `jobs_change_on_delete` AFTER DELETE ON `jobs` FOR EACH ROW
  INSERT INTO `job_changes` (`job_id`, `seq`, `changed_at`, `ever_public`)
  VALUES (OLD.`id`, NULL, UTC_TIMESTAMP(6), FALSE)
  ON DUPLICATE KEY UPDATE `seq` = NULL, `changed_at` = UTC_TIMESTAMP(6);
