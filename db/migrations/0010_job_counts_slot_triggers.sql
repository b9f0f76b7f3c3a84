-- Custom migration: 0008's triggers, each change now added to the writing connection's own row
-- (`slot` = CONNECTION_ID()) instead of the one shared row of its group. With one shared row, a
-- transaction that created an active job held that group's counter row until it committed, and
-- every other writer of the group (an API create, another system's batch) waited for it; a
-- connection runs one transaction at a time, so no two open transactions share a row now. The
-- service folds committed slot rows into slot 0 (service/jobs/job-counts.ts); totals are SUMs
-- over all of a group's rows, so folding never changes one. A decrement is an upsert too: the
-- connection's row may not exist yet (it then starts at -1).
-- Replaced under LOCK TABLES (writers wait a moment): no write can fall between DROP and CREATE.
LOCK TABLES `jobs` WRITE, `job_counts` WRITE, `job_changes` WRITE;
--> statement-breakpoint
DROP TRIGGER `jobs_counts_on_insert`;
--> statement-breakpoint
CREATE TRIGGER `jobs_counts_on_insert` AFTER INSERT ON `jobs` FOR EACH ROW
BEGIN
  IF NEW.`visible_status` IN ('active', 'open', 'paused', 'closed') THEN
    INSERT INTO `job_counts` (`by_department`, `department_key`, `status`, `type`, `workplace`, `slot`, `n`)
    VALUES (FALSE, '', NEW.`visible_status`, NEW.`type`, COALESCE(NEW.`workplace`, 'none'), CONNECTION_ID(), 1),
      (TRUE, NEW.`department_key`, NEW.`visible_status`, NEW.`type`, COALESCE(NEW.`workplace`, 'none'), CONNECTION_ID(), 1)
    ON DUPLICATE KEY UPDATE `n` = `n` + 1;
  END IF;
END;
--> statement-breakpoint
DROP TRIGGER `jobs_counts_on_update`;
--> statement-breakpoint
-- Only a change of group moves a count (an edit of the title touches no counter row); a
-- department change leaves the all-departments row alone.
CREATE TRIGGER `jobs_counts_on_update` AFTER UPDATE ON `jobs` FOR EACH ROW
BEGIN
  DECLARE was_counted BOOLEAN DEFAULT COALESCE(OLD.`visible_status` IN ('active', 'open', 'paused', 'closed'), FALSE);
  DECLARE is_counted BOOLEAN DEFAULT COALESCE(NEW.`visible_status` IN ('active', 'open', 'paused', 'closed'), FALSE);
  DECLARE same_group BOOLEAN DEFAULT was_counted AND is_counted AND OLD.`visible_status` = NEW.`visible_status`
    AND OLD.`type` = NEW.`type` AND OLD.`workplace` <=> NEW.`workplace`;
  IF NOT same_group THEN
    IF was_counted THEN
      INSERT INTO `job_counts` (`by_department`, `department_key`, `status`, `type`, `workplace`, `slot`, `n`)
      VALUES (FALSE, '', OLD.`visible_status`, OLD.`type`, COALESCE(OLD.`workplace`, 'none'), CONNECTION_ID(), -1)
      ON DUPLICATE KEY UPDATE `n` = `n` - 1;
    END IF;
    IF is_counted THEN
      INSERT INTO `job_counts` (`by_department`, `department_key`, `status`, `type`, `workplace`, `slot`, `n`)
      VALUES (FALSE, '', NEW.`visible_status`, NEW.`type`, COALESCE(NEW.`workplace`, 'none'), CONNECTION_ID(), 1)
      ON DUPLICATE KEY UPDATE `n` = `n` + 1;
    END IF;
  END IF;
  IF NOT (same_group AND OLD.`department_key` = NEW.`department_key`) THEN
    IF was_counted THEN
      INSERT INTO `job_counts` (`by_department`, `department_key`, `status`, `type`, `workplace`, `slot`, `n`)
      VALUES (TRUE, OLD.`department_key`, OLD.`visible_status`, OLD.`type`, COALESCE(OLD.`workplace`, 'none'), CONNECTION_ID(), -1)
      ON DUPLICATE KEY UPDATE `n` = `n` - 1;
    END IF;
    IF is_counted THEN
      INSERT INTO `job_counts` (`by_department`, `department_key`, `status`, `type`, `workplace`, `slot`, `n`)
      VALUES (TRUE, NEW.`department_key`, NEW.`visible_status`, NEW.`type`, COALESCE(NEW.`workplace`, 'none'), CONNECTION_ID(), 1)
      ON DUPLICATE KEY UPDATE `n` = `n` + 1;
    END IF;
  END IF;
END;
--> statement-breakpoint
DROP TRIGGER `jobs_counts_on_delete`;
--> statement-breakpoint
CREATE TRIGGER `jobs_counts_on_delete` AFTER DELETE ON `jobs` FOR EACH ROW
BEGIN
  IF OLD.`visible_status` IN ('active', 'open', 'paused', 'closed') THEN
    INSERT INTO `job_counts` (`by_department`, `department_key`, `status`, `type`, `workplace`, `slot`, `n`)
    VALUES (FALSE, '', OLD.`visible_status`, OLD.`type`, COALESCE(OLD.`workplace`, 'none'), CONNECTION_ID(), -1),
      (TRUE, OLD.`department_key`, OLD.`visible_status`, OLD.`type`, COALESCE(OLD.`workplace`, 'none'), CONNECTION_ID(), -1)
    ON DUPLICATE KEY UPDATE `n` = `n` - 1;
  END IF;
END;
--> statement-breakpoint
UNLOCK TABLES;
