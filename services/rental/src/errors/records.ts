import { localisedCodes } from './localised.ts'

/** Data kept and sent: outbound webhooks, retention and legal holds, the data room, onboarding and erasure. */
export const recordErrors = localisedCodes({
  // outbound webhooks
  webhook_not_found: {
    status: 404,
    description: 'no such webhook in the organization',
    ar: 'لا يوجد خطاف ويب بهذا المعرّف في المؤسسة.',
  },
  webhook_limit: {
    status: 409,
    description: 'the organization has the most webhooks allowed: delete one first',
    ar: 'بلغت المؤسسة الحد الأقصى من خطافات الويب: احذف واحدًا أولًا.',
  },
  invalid_webhook_url: {
    status: 400,
    description:
      'the webhook URL is not https, or reaches an address that is not public (named in the message)',
    ar: 'عنوان خطاف الويب ليس https أو يشير إلى عنوان غير عام.',
  },
  unknown_event_type: {
    status: 400,
    description: 'an event type that the rental does not record (named)',
    ar: 'نوع الحدث غير معروف لدى الخدمة.',
  },
  // retention and legal holds
  invalid_retention: {
    status: 400,
    description:
      'a retention period is not an ISO 8601 duration (days, hours, minutes, seconds) or seconds, or is out of bounds (named)',
    ar: 'مدة الاحتفاظ ليست مدة ISO 8601 بالأيام أو الساعات أو الدقائق أو الثواني، أو أنها خارج الحدود المسموحة.',
  },
  org_not_found: {
    status: 404,
    description: 'no such organization (operators name another organization)',
    ar: 'لا توجد مؤسسة بهذا المعرّف.',
  },
  hold_not_found: {
    status: 404,
    description: 'no such legal hold of the organization',
    ar: 'لا يوجد تجميد قانوني بهذا المعرّف لدى المؤسسة.',
  },
  hold_released: {
    status: 409,
    description: 'the legal hold was released already (when, named)',
    ar: 'رُفع هذا التجميد القانوني من قبل.',
  },
  legal_hold: {
    status: 409,
    description: 'a legal hold (named) stands over the data: nothing of it is deleted until it is released',
    ar: 'البيانات خاضعة لتجميد قانوني: لا يُحذف منها شيء حتى يُرفع.',
  },
  // the data room
  file_not_found: {
    status: 404,
    description: 'no such file of the organization (or it was deleted)',
    ar: 'لا يوجد ملف بهذا المعرّف لدى المؤسسة، أو حُذف.',
  },
  invalid_file_name: {
    status: 400,
    description: 'the file name is missing, blank, too long, or holds path separators or control characters',
    ar: 'اسم الملف مفقود أو فارغ أو طويل جدًا أو يحتوي على فواصل مسار أو محارف تحكم.',
  },
  invalid_content_type: {
    status: 400,
    description: 'the file’s media type is missing or malformed',
    ar: 'نوع وسائط الملف مفقود أو غير صالح.',
  },
  upload_incomplete: {
    status: 400,
    description: 'the upload broke off or its multipart body is malformed',
    ar: 'انقطع الرفع أو أن نص الطلب متعدد الأجزاء غير صالح: لم يُحفظ شيء.',
  },
  file_corrupted: {
    status: 500,
    description: 'the stored file failed its integrity check (a GCM tag): it is not sent',
    ar: 'فشل الملف المخزّن في فحص السلامة ولن يُرسل.',
  },
  file_url_invalid: {
    status: 403,
    description: 'the file URL’s token is malformed or its signature is not ours (a task’s file hand-off)',
    ar: 'رابط الملف غير صالح أو توقيعه ليس من هذه الخدمة.',
  },
  file_url_expired: {
    status: 403,
    description: 'the file URL has expired, or its task has ended',
    ar: 'انتهت صلاحية رابط الملف، أو انتهت المهمة التي سُلّم لها.',
  },
  // onboarding
  kyb_not_found: {
    status: 404,
    description: 'no such business check the caller may see',
    ar: 'لا يوجد تحقق من النشاط التجاري بهذا المعرّف يمكنك الاطلاع عليه.',
  },
  kyb_state: {
    status: 409,
    description: 'the business check’s state (named) does not allow the move',
    ar: 'حالة التحقق من النشاط التجاري (المذكورة في التفاصيل) لا تسمح بهذه الخطوة.',
  },
  kyb_required: {
    status: 403,
    description:
      'the organization needs an approved business check (POST /api/onboarding/kyb) for this: a listing, or a hire above RENTAL_KYB_HIRE_LIMIT_FILS',
    ar: 'تحتاج مؤسستك إلى تحقق معتمد من نشاطها التجاري لهذه العملية: قدّمه من صفحة الانضمام.',
  },
  onboarding_not_configured: {
    status: 503,
    description:
      'the rental has no organization key at the identity provider (RENTAL_IDP_ORG_KEY): checks cannot run',
    ar: 'خدمة التحقق غير مهيأة لدى مزوّد الهوية حاليًا: تواصل مع المشغّل.',
  },
  reason_required: {
    status: 400,
    description: 'a rejection needs a reason',
    ar: 'الرفض يحتاج إلى سبب.',
  },
  // erasure
  erasure_refused: {
    status: 409,
    description:
      'the organization cannot be erased now: open disputes (named) or a legal hold (named) must end first',
    ar: 'لا يمكن محو المؤسسة الآن: السبب مذكور في التفاصيل (حجز قانوني أو نزاعات مفتوحة أو ضمانات مستحقة).',
  },
})
