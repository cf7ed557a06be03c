import { httpErrorCodes } from '@svc/kit'
import { localisedCodes } from './localised.ts'

/** What any route may answer, and signing in, stepping up, organizations, roles and tokens. */
export const accessErrors = localisedCodes({
  // what any route may answer (the kit's HTTP layer)
  invalid_request: {
    ...httpErrorCodes.invalid_request,
    ar: 'أحد المعاملات أو حقول الطلب غير صالح أو خارج النطاق المسموح.',
  },
  invalid_json: { ...httpErrorCodes.invalid_json, ar: 'نص الطلب ليس JSON صالحًا.' },
  not_found: { ...httpErrorCodes.not_found, ar: 'لا يوجد مسار بهذا العنوان.' },
  method_not_allowed: { ...httpErrorCodes.method_not_allowed, ar: 'هذا المسار لا يقبل هذه الطريقة.' },
  request_timeout: { ...httpErrorCodes.request_timeout, ar: 'لم يصل الطلب كاملًا في الوقت المحدد.' },
  payload_too_large: { ...httpErrorCodes.payload_too_large, ar: 'حجم الطلب أكبر مما تقبله الخدمة.' },
  uri_too_long: { ...httpErrorCodes.uri_too_long, ar: 'مسار الطلب أطول مما تقبله الخدمة.' },
  expectation_failed: {
    ...httpErrorCodes.expectation_failed,
    ar: 'ترويسة Expect في الطلب تطلب ما لا يقدمه الخادم.',
  },
  headers_too_large: {
    ...httpErrorCodes.headers_too_large,
    ar: 'سطر الطلب وترويساته أكبر من 16 كيلوبايت.',
  },
  http_version_not_supported: {
    ...httpErrorCodes.http_version_not_supported,
    ar: 'الطلب ليس بإصدار HTTP/1.0 أو HTTP/1.1.',
  },
  unsupported_media_type: {
    ...httpErrorCodes.unsupported_media_type,
    ar: 'نوع محتوى الطلب غير مقبول في هذا المسار.',
  },
  shutting_down: { ...httpErrorCodes.shutting_down, ar: 'الخدمة قيد الإيقاف الآن: حاول مرة أخرى.' },
  unavailable: {
    ...httpErrorCodes.unavailable,
    ar: 'لم تستجب قاعدة البيانات في الوقت المحدد: حاول مرة أخرى لاحقًا.',
  },
  // sign-in and sessions
  unauthenticated: {
    status: 401,
    description: 'no live console session: sign in first',
    ar: 'لا توجد جلسة نشطة: سجّل الدخول أولًا.',
  },
  csrf_failed: {
    status: 403,
    description: 'the CSRF header is missing or not the session’s token',
    ar: 'ترويسة CSRF مفقودة أو لا تطابق رمز الجلسة.',
  },
  login_expired: {
    status: 400,
    description: 'no sign-in in progress in this browser, or it expired',
    ar: 'لا يوجد تسجيل دخول جارٍ في هذا المتصفح، أو انتهت صلاحيته.',
  },
  login_failed: {
    status: 400,
    description: 'the identity provider refused the sign-in',
    ar: 'رفض مزوّد الهوية تسجيل الدخول.',
  },
  invalid_issuer: {
    status: 400,
    description: 'the authorization response is not from our identity provider',
    ar: 'استجابة التفويض ليست من مزوّد الهوية المعتمد.',
  },
  invalid_state: {
    status: 400,
    description: 'the authorization response is not for this sign-in',
    ar: 'استجابة التفويض لا تخص تسجيل الدخول هذا.',
  },
  invalid_logout_token: {
    status: 400,
    description: 'the back-channel logout token is not valid',
    ar: 'رمز تسجيل الخروج غير صالح.',
  },
  invalid_event_signature: {
    status: 403,
    description: 'X-Svc-Signature is missing or not the HMAC-SHA256 of the body under the idp webhook secret',
    ar: 'توقيع الحدث مفقود أو غير صحيح.',
  },
  invalid_identity_event: {
    status: 400,
    description: 'the identity event body is not valid JSON of its shape',
    ar: 'حدث الهوية ليس بالصيغة المطلوبة.',
  },
  idp_unavailable: {
    status: 503,
    also: [502],
    description:
      'the identity provider has not been reached yet (503) or did not answer the sign-in or an onboarding check (502)',
    ar: 'تعذّر الوصول إلى مزوّد الهوية.',
  },
  // step-up (a recent second factor for sensitive routes)
  step_up_required: {
    status: 401,
    description:
      'the route needs a second factor (acr urn:svc:mfa) proven recently: follow the step-up URL in the message (also in WWW-Authenticate and Link)',
    ar: 'هذه العملية تتطلب تحققًا إضافيًا حديثًا (عامل ثانٍ): أكمل التحقق الإضافي ثم أعد المحاولة.',
  },
  second_factor_missing: {
    status: 403,
    description:
      'the identity provider answered unmet_authentication_requirements: the account has no second factor; set one up at the idp account page named in the message',
    ar: 'لا يوجد عامل ثانٍ في حسابك: فعّل رمز TOTP أو مفتاح مرور من صفحة حسابك لدى مزوّد الهوية ثم أعد المحاولة.',
  },
  step_up_failed: {
    status: 400,
    description: 'the step-up sign-in was not the same person, not a second factor, or not recent',
    ar: 'لم ينجح التحقق الإضافي: يجب أن يكون الشخص نفسه وبعامل ثانٍ وحديثًا. أعد المحاولة.',
  },
  invalid_return_to: {
    status: 400,
    description: 'return_to is not a same-origin relative path',
    ar: 'عنوان العودة ليس مسارًا نسبيًا على هذا الموقع.',
  },
  // organizations and roles
  forbidden: {
    status: 403,
    description: 'the member’s role lacks the permission the route needs (named in the message)',
    ar: 'دورك في المؤسسة لا يملك الصلاحية التي يتطلبها هذا الإجراء.',
  },
  member_not_found: {
    status: 404,
    description: 'no such member or invitation in the organization',
    ar: 'لا يوجد عضو أو دعوة بهذا المعرّف في المؤسسة.',
  },
  already_member: {
    status: 409,
    description: 'that email is already invited or a member',
    ar: 'هذا البريد الإلكتروني مدعو أو عضو بالفعل.',
  },
  last_owner: {
    status: 409,
    description: 'the organization’s last owner cannot be removed or demoted',
    ar: 'لا يمكن إزالة آخر مالك للمؤسسة أو تخفيض دوره.',
  },
  role_builtin: {
    status: 409,
    description: 'a built-in role (owner, admin, member, billing, viewer) does not change nor go',
    ar: 'الأدوار المدمجة لا تتغير ولا تُحذف: أنشئ دورًا مخصصًا باسم آخر.',
  },
  role_in_use: {
    status: 409,
    description:
      'members or invitations hold the role (how many is named): it cannot lose members:owners, nor be deleted until they have another role',
    ar: 'هذا الدور يحمله أعضاء أو دعوات معلّقة: لا يمكن أن يفقد الصلاحية التي تُبقي المالك مالكًا، ولا يُحذف حتى يُمنحوا دورًا آخر.',
  },
  export_not_found: {
    status: 404,
    description: 'no such export in the organization',
    ar: 'لا يوجد تصدير بهذا المعرّف في مؤسستك.',
  },
  export_in_progress: {
    status: 409,
    description: 'an export is already queued or running (named)',
    ar: 'يوجد تصدير لمؤسستك قيد الانتظار أو التنفيذ الآن: تابعه بدلًا من بدء تصدير جديد.',
  },
  export_not_ready: {
    status: 409,
    description: 'the export is not ready yet (its state is named)',
    ar: 'التصدير ليس جاهزًا بعد: تابع تقدّمه حتى يكتمل.',
  },
  export_expired: {
    status: 410,
    description: 'the export’s archive is past its seven days and gone',
    ar: 'انتهت صلاحية أرشيف التصدير بعد سبعة أيام وحُذف: ابدأ تصديرًا جديدًا.',
  },
  role_not_found: {
    status: 404,
    description: 'no built-in or organization’s custom role of that name',
    ar: 'لا يوجد دور مدمج ولا دور مخصص في مؤسستك بهذا الاسم.',
  },
  secret_not_found: {
    status: 404,
    description: 'no secret of that name in the organization’s vault',
    ar: 'لا يوجد سر بهذا الاسم في خزنة مؤسستك.',
  },
  // API tokens
  quota_exceeded: {
    status: 409,
    description: 'the client holds the most API tokens allowed',
    ar: 'بلغت الحد الأقصى المسموح به من رموز الواجهة البرمجية.',
  },
  // public pages
  unknown_language: {
    status: 404,
    description: 'no message catalogue for that language',
    ar: 'لا يوجد فهرس رسائل لهذه اللغة.',
  },
})
